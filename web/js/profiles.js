// profiles.js — the profile list ("/"): each system profile with its device profiles (its
// DeviceProfileList, from /api/profiles) indented under it, then the device profiles no
// system profile names. Sizes in B/KiB/MiB, durations with units; long names and table
// lists are ellipsised with the whole text on hover. Each profile has a checkbox: with two
// checked, "Compare" opens /compare?a=<first>&b=<second> (js/compare.js).
import { profiles as listProfiles, profileInfo, big, viewHref } from './api.js';
import { $ } from './dom.js';
import { esc, cut, fmtNs, fmtBytes } from './format.js';

export async function showProfiles() {
  $('#list-view').hidden = false;
  document.title = 'nxprof — profiles';
  const { profiles } = await listProfiles();
  const byName = new Map(profiles.map((p) => [p.name, p]));
  // Device profiles nested in their system profile's folder are not in the listing.
  const nested = profiles.flatMap((p) => (p.device_profiles || []).filter((d) => d.open && !byName.has(d.open)));
  await Promise.all(nested.map((d) => profileInfo(d.open).then((x) => byName.set(d.open, x), () => {})));
  const tbody = $('#profiles tbody');
  tbody.innerHTML = '';
  $('#profiles-empty').hidden = profiles.length > 0;
  for (const p of profiles) {
    if (p.system_profile && byName.has(p.system_profile)) continue;   // listed under its system profile
    tbody.append(profileRow(p, null));
    for (const d of p.device_profiles || []) tbody.append(profileRow(byName.get(d.open) || null, d));
  }
  installPick(tbody);
}

// The two checked profiles, in the order they were checked, open the Compare page.
function installPick(tbody) {
  const picked = [];
  const go = $('#compare-go');
  tbody.addEventListener('change', (e) => {
    const box = e.target.closest('input.pick');
    if (!box) return;
    const i = picked.indexOf(box.value);
    if (box.checked && i < 0) picked.push(box.value);
    if (!box.checked && i >= 0) picked.splice(i, 1);
    go.disabled = picked.length !== 2;
  });
  go.addEventListener('click', () => {
    location.href = `/compare?${new URLSearchParams({ a: picked[0], b: picked[1] })}`;
  });
}

// One row: profile p (null when unknown), or device profile ref (a DeviceProfileList entry
// of the row above) indented under its system profile.
function profileRow(p, ref) {
  const tr = document.createElement('tr');
  tr.className = ref ? 'child' : p.kind === 'system' ? 'system' : '';
  const name = ref ? ref.name : p.name;
  const open = ref ? ref.open : p.name;
  const link = open ? `<a href="${viewHref(open)}" title="${esc(name)}">${esc(name)}</a>` : `<span title="${esc(name)}">${esc(name)}</span>`;
  const kind = ref && !ref.exists ? '<span class="warn">missing</span>' : esc(p ? p.kind ?? '' : '');
  const nc = ref && ref.nc_id !== null ? `NC ${esc(ref.nc_id)}` : '';
  const span = p && p.first_ts !== null && p.last_ts !== null;
  const dur = span ? fmtNs(Number(big(p.last_ts) - big(p.first_ts))) : '';
  const err = p && p.error ? `${cut(`⚠ ${p.error}`, 'warn')}<br>` : '';
  const pick = open && p ? `<input type="checkbox" class="pick" value="${esc(open)}" title="Compare ${esc(name)}">` : '';
  tr.innerHTML = `<td class="name">${pick}<span class="cut">${ref ? '<span class="tree">└</span>' : ''}${link}</span></td><td>${kind}</td><td>${nc}</td>` +
    `<td class="num">${p ? fmtBytes(p.size_bytes) : ''}</td><td>${esc(span ? p.first_ts : '')}</td><td class="num">${dur}</td>` +
    `<td class="tables">${p ? err + cut(p.tables.join(', ')) : ''}</td>`;
  return tr;
}
