// insights.js — the Insights section of a system profile's page (under the timeline) and
// of a device profile's (in the side panel), from /api/profiles/<name>/insights
// (query/insights.h): the findings, most severe first, each with its rule, threshold and
// evidence; when none fired, which rules were checked. Hidden when they cannot be read.
import { insights } from '../api.js';
import { esc } from '../format.js';

function insightsHTML(doc) {
  if (!doc.insights.length)
    return `<p class="muted">No rule fired. Checked: ${doc.rules.map((r) => esc(r.title)).join(', ')}.</p>`;
  return '<ol class="insights">' + doc.insights.map((x) =>
    `<li class="insight ${esc(x.severity)}" data-rule="${esc(x.rule)}"><span class="sev">${esc(x.severity)}</span> <b>${esc(x.title)}</b>` +
    `${x.subject ? ` <span class="muted">${esc(x.subject)}</span>` : ''}<div>${esc(x.evidence)}</div>` +
    `<div class="muted rule">rule <code>${esc(x.rule)}</code>: ${esc(x.threshold)}</div></li>`).join('') + '</ol>';
}

async function show(el, { name }) {
  let doc;
  try { doc = await insights(name); } catch { el.hidden = true; return; }
  el.hidden = false;
  el.querySelector('.content').innerHTML = insightsHTML(doc);
}

export const systemInsights = {
  id: 'system-insights', page: 'system', place: 'below', hidden: true,
  title: 'Insights', tip: 'Rules run over the profile (docs/analyses.md#performance-insights)', show,
};

export const deviceInsights = { id: 'insights', page: 'device', place: 'side-top', hidden: true, title: 'Insights', show };
