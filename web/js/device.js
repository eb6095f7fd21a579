// device.js — a device profile's page ("/view/<device>"): the Device Trace Viewer (viewer.js)
// with its Memory view (memory.js, when the profile has SbufAllocation or
// HbmUsageSummaryByType), then, once the first window is drawn, its sections
// (sections/registry.js: Insights and Source above the side panel's Event Details, Summary
// at its foot, Breakdown under the timeline).
import { $ } from './dom.js';
import { V } from './store.js';
import { startViewer } from './viewer.js';
import { installMemory } from './memory.js';
import { mountSections } from './sections/mount.js';

export async function showDevice(name, info) {
  await startViewer(name, info, $('#device-view'));
  installMemory(V.tables);
  await mountSections('device')({ name, info });
}
