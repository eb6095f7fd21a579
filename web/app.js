// nxprof web viewer — the entry module: routes the URL to a page (docs/viewer.md).
//
// "/" (and "/index.html") is the profile list (js/profiles.js). "/view/<name>" (or
// "/profile/<name>") opens profile <name> (URL-encoded; a device profile nested in its
// system profile's folder is "<system>/<devices_dir>/<device>", devices_dir from
// /api/schema viewer.names, docs/api.md): a system profile shows the System Trace Viewer
// and its sections (js/system.js), a device profile the Device Trace Viewer and its
// sections (js/device.js) with a trail back to its system profile; both pages' sections
// are listed in js/sections/registry.js. "/compare?a=<A>&b=<B>" compares two profiles
// (js/compare.js). Everything talks only to the JSON API of `nxprof serve`
// (docs/api.md), through js/api.js.
import { profiles, profileInfo, schema, viewHref, leafName } from './js/api.js';
import { $, setStatus } from './js/dom.js';
import { esc } from './js/format.js';
import { showProfiles } from './js/profiles.js';
import { showCompare } from './js/compare.js';
import { showSystem } from './js/system.js';
import { showDevice } from './js/device.js';
import { updateURL } from './js/viewer.js';

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
  const p = (await profiles()).profiles.find((x) => x.name === name);
  return p ? p.system_profile : null;
}

async function openProfile(name) {
  setStatus('Loading…');
  const info = await profileInfo(name);
  setCrumb(name, null);
  document.title = `nxprof — ${leafName(name)}`;
  if (info.kind === 'system') {
    await showSystem(info);
  } else {
    systemOf(name).then((system) => { setCrumb(name, system); updateURL(); }, () => {});
    await showDevice(name, info);
  }
}

// The profile path `path` names, or null: "/view/<S>" (or "/profile/<S>"), or a device
// profile nested in it, "/view/<S>/<devices_dir>/<D>", each name URL-encoded.
function profileOf(path, devicesDir) {
  const m = path.match(/^\/(?:view|profile)\/([^/]+)(?:\/([^/]+)\/([^/]+))?\/?$/);
  if (!m) return null;
  if (m[2] === undefined) return decodeURIComponent(m[1]);
  return m[2] === devicesDir ? [m[1], m[2], m[3]].map(decodeURIComponent).join('/') : null;
}

function route() {
  const fail = (e) => { setStatus(`Error: ${e.message}`); };
  const ready = () => { document.body.dataset.ready = 'true'; };
  // data-ready: every section of the page has its answer or its error (for tests, docs/viewer.md)
  if (/^\/(?:view|profile)\/[^/]/.test(location.pathname)) {
    schema().then((s) => {
      const name = profileOf(location.pathname, s.viewer.names.devices_dir);
      if (name === null) { showProfiles().catch(fail); return; }
      openProfile(name).catch(fail).finally(ready);
    }, (e) => { fail(e); ready(); });
  } else if (location.pathname === '/compare') showCompare().catch(fail);
  else showProfiles().catch(fail);
}

route();
