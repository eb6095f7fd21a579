// insights.js — the Insights panel of a system or device profile's page, from
// /api/profiles/<name>/insights (query/insights.h): the findings, most severe first,
// each with its rule, threshold and evidence; when none fired, which rules were checked.
import { insights } from './api.js';
import { esc } from './format.js';

export function insightsHTML(doc) {
  if (!doc.insights.length)
    return `<p class="muted">No rule fired. Checked: ${doc.rules.map((r) => esc(r.title)).join(', ')}.</p>`;
  return '<ol class="insights">' + doc.insights.map((x) =>
    `<li class="insight ${esc(x.severity)}" data-rule="${esc(x.rule)}"><span class="sev">${esc(x.severity)}</span> <b>${esc(x.title)}</b>` +
    `${x.subject ? ` <span class="muted">${esc(x.subject)}</span>` : ''}<div>${esc(x.evidence)}</div>` +
    `<div class="muted rule">rule <code>${esc(x.rule)}</code>: ${esc(x.threshold)}</div></li>`).join('') + '</ol>';
}

// Fills section `box` (its .content) with the profile's insights; hides it when they cannot be read.
export async function showInsights(name, box) {
  let doc;
  try { doc = await insights(name); } catch { box.hidden = true; return; }
  box.hidden = false;
  box.querySelector('.content').innerHTML = insightsHTML(doc);
}
