// registry.js — every section of the system page and of the device page (docs/viewer.md
// "Sections"), in the order they stand on their page; mount.js builds and shows them.
// A section is a descriptor exported by a module of this folder:
//
//   { id       the <section>'s id;
//     page     'system' or 'device': the page it belongs to (mount.js PAGES);
//     place    where on the page (mount.js PLACES): 'below' the timeline, 'side-top' or
//              'side-bottom' of the viewer's side panel;
//     group    (optional) the id of a <div> it shares with its neighbours of that group;
//     title    its heading; tip (optional) the heading's tooltip;
//     hidden   (optional) hidden until show() finds something to show (else it reads
//              "Loading…" until then);
//     show(el, ctx)  fills section `el` (its .content) and resolves once it has its
//              answer or its error. ctx: name and info (the profile, /api/profiles/<name>);
//              on the system page also summary (/summary's answer, null when it failed) and
//              framework (true when the profile names no device profiles). }
//
// Adding a section: a module here exporting its descriptor, and one line below (with its
// import) at the place it takes on its page.
import { deviceUse, steps } from './device_answers.js';
import { systemInsights, deviceInsights } from './insights.js';
import { busy, ops } from './system_summary.js';
import { systemBreakdown, deviceBreakdown } from './breakdown.js';
import { ranks } from './rank_heatmap.js';
import { deviceProfiles } from './device_profiles.js';
import { source } from './source.js';
import { deviceSummary } from './device_summary.js';

export const SECTIONS = [
  deviceUse,          // system page, below the timeline: Devices
  steps,              //   Steps
  systemInsights,     //   Insights
  busy,               //   Busy time per thread
  ops,                //   Top operators by self time
  systemBreakdown,    //   Breakdown
  ranks,              //   Ranks
  deviceProfiles,     //   Device Profiles
  deviceInsights,     // device page, the side panel above Event Details: Insights
  source,             //   Source
  deviceSummary,      // device page, the side panel's foot: Summary
  deviceBreakdown,    // device page, below the timeline: Breakdown
];
