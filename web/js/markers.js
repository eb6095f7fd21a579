// markers.js — time markers set with a right-click, and the deltas between them.
//
// Markers are {t (ns offset from t0), label, colour?, track?} kept sorted by t (saved with
// the profile: annotate.js); the axis shows, between each two consecutive markers, the
// time from one to the next. A right-click within NEAR_PX of a marker removes it,
// anywhere else on the plot adds one; `M` clears them (input.js). toggleMarker and
// markerDeltas are pure.

export const NEAR_PX = 4;

// markers with an unlabelled marker at t added, or with the marker within `near` ns of t
// removed (a new array).
export function toggleMarker(markers, t, near) {
  let at = -1, bestD = Infinity;
  markers.forEach((m, i) => { const d = Math.abs(m.t - t); if (d <= near && d < bestD) { at = i; bestD = d; } });
  if (at >= 0) return markers.filter((_, i) => i !== at);
  return [...markers, { t, label: '' }].sort((a, b) => a.t - b.t);
}

// [{from, to, delta}] for each pair of consecutive markers.
export function markerDeltas(markers) {
  const out = [];
  for (let i = 1; i < markers.length; i++) out.push({ from: markers[i - 1].t, to: markers[i].t, delta: markers[i].t - markers[i - 1].t });
  return out;
}
