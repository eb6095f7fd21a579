// nxprof web viewer — the entry module: routes the URL to a page (docs/viewer.md).
//
// "/" (and "/index.html") is the profile list (js/profiles.js). "/view/<name>" (or
// "/profile/<name>") opens profile <name> (URL-encoded; a device profile nested in its
// system profile's folder is "<system>/devices/<device>", docs/api.md): a system profile
// shows the System Trace Viewer with its summary and Device Profiles (js/system.js), a
// device profile the Device Trace Viewer (js/viewer.js) with a trail back to its system
// profile and its Breakdown (js/breakdown.js). "/compare?a=<A>&b=<B>" compares two
// profiles (js/compare.js). Everything talks only to the JSON API of `nxprof serve`
// (docs/api.md).
import { api, namePath, viewHref, leafName } from './js/api.js';
import { $, setStatus } from './js/dom.js';
import { esc } from './js/format.js';
import { showEngineBreakdown } from './js/breakdown.js';
import { showProfiles } from './js/profiles.js';
import { showCompare } from './js/compare.js';
import { showSystem } from './js/system.js';
import { startViewer, updateURL } from './js/viewer.js';

// The header's trail: Profiles › [its system profile ›] profile `name`. The system
// profile's link carries the viewer's window (viewer.js updateURL keeps it current).
function setCrumb(name, system) {
  const sep = ' <span class="sep">›</span> ';
  let html = '<a href="/">Profiles</a>';
  if (system) html += `${sep}<a id="crumb-system" href="${viewHref(system)}" data-base="${viewHref(system)}" title="system profile ${esc(system)}">${esc(system)}</a>`;
  html += `${sep}<span class="here" title="${esc(name)}">${esc(leafName(name))}</span>`;
  $('#crumb').innerHTML = html;
}

// The system profile device profile `name` belongs to: the one it is nested in, else the
// listing's system_profile (docs/api.md), or null.
async function systemOf(name) {
  const nest = name.indexOf('/');
  if (nest >= 0) return name.slice(0, nest);
  const { profiles } = await api('/api/profiles');
  const p = profiles.find((x) => x.name === name);
  return p ? p.system_profile : null;
}

async function openProfile(name) {
  setStatus('Loading…');
  const info = await api(`/api/profiles/${namePath(name)}`);
  setCrumb(name, null);
  document.title = `nxprof — ${leafName(name)}`;
  if (info.kind === 'system') {
    await showSystem(info);
  } else {
    systemOf(name).then((system) => { setCrumb(name, system); updateURL(); }, () => {});
    await startViewer(name, info, $('#device-view'));
    await showEngineBreakdown(name, $('#device-view'));
  }
}

function route() {
  const fail = (e) => { setStatus(`Error: ${e.message}`); };
  const m = location.pathname.match(/^\/(?:view|profile)\/([^/]+(?:\/devices\/[^/]+)?)\/?$/);
  // data-ready: every section of the page has its answer or its error (for tests, docs/viewer.md)
  if (m) openProfile(m[1].split('/').map(decodeURIComponent).join('/')).catch(fail).finally(() => { document.body.dataset.ready = 'true'; });
  else if (location.pathname === '/compare') showCompare().catch(fail);
  else showProfiles().catch(fail);
}

route();
