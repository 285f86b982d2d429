// Watch: the SSE frames of each run as its client receives them, taken from
// the control-plane stream's run.event mirror. The console never subscribes
// to /v1/runs/{id}/events: a second consumer would take frames from the
// application under test.
import { h } from './ui.js';

const perRun = 1000; // frames kept per run
const perRunChars = 256 * 1024; // characters of frame text kept per run (a frame past it is cut)
const maxRuns = 100; // runs whose frames are kept
const frames = new Map(); // run id → {list: [{runId, text, name}], chars, dropped}
const watchers = new Set(); // {runId, fn}

// mirror reads a run.event frame of the control-plane stream ({kind,
// namespace, branch, run_id, event}): the run id and the frame text as the
// run's subscriber gets it — data: <json>, or a comment such as
// ": stream closed" when the event is text.
export function mirror(f) {
  const d = f.data;
  if (!d || typeof d !== 'object' || !d.run_id) return null;
  const e = d.event;
  let text, name = '';
  if (typeof e === 'string') text = (e.startsWith(':') ? e : 'data: ' + e) + '\n\n';
  else { text = 'data: ' + JSON.stringify(e) + '\n\n'; name = (e && e.event) || ''; }
  return { runId: d.run_id, text, name };
}

// watchFrame keeps the frames of every run.event the stream delivers.
export function watchFrame(f) {
  if (f.event !== 'run.event') return;
  const m = mirror(f);
  if (!m) return;
  if (!frames.has(m.runId)) {
    if (frames.size >= maxRuns) frames.delete(frames.keys().next().value);
    frames.set(m.runId, kept());
  }
  keep(frames.get(m.runId), m);
  watchers.forEach((w) => { if (w.runId === m.runId) w.fn(m); });
}

function kept() { return { list: [], chars: 0, dropped: 0 }; }

// keep adds frame m to a run's kept frames: the newest ones, at most perRun
// frames and perRunChars characters (older ones are dropped and counted; one
// frame longer than that keeps its beginning).
function keep(k, m) {
  if (m.text.length > perRunChars) {
    m = { ...m, text: m.text.slice(0, perRunChars) + '\n: … cut: ' + m.text.length + ' characters in all\n\n' };
  }
  k.list.push(m);
  k.chars += m.text.length;
  while (k.list.length > perRun || (k.chars > perRunChars && k.list.length > 1)) {
    k.chars -= k.list.shift().text.length;
    k.dropped++;
  }
}

// watchPanel shows the frames of runId seen since the page loaded, and new
// ones as they arrive while the panel is on the page. A new frame leaves the
// panel where the user scrolled it (scrolled to the bottom, it follows) and
// a text selection in it: the text changes only at its ends, frames dropped
// at the start and new ones added at the end.
export function watchPanel(runId, stream) {
  const text = document.createTextNode('');
  const log = h('pre', { class: 'frames', tabindex: '0', 'aria-label': 'Event frames of ' + runId, 'data-frames': runId }, text);
  const count = h('span', { class: 'count' });
  const state = h('p', { class: 'hint' });
  let shown = []; // the frames in text, oldest first
  const show = () => {
    const k = frames.get(runId) || kept();
    const first = k.list.length ? shown.indexOf(k.list[0]) : -1; // frames dropped since
    const stay = shown.length - first;
    if (first >= 0 && k.list[stay - 1] === shown[shown.length - 1]) {
      text.deleteData(0, shown.slice(0, first).reduce((n, m) => n + m.text.length, 0));
      text.appendData(k.list.slice(stay).map((m) => m.text).join(''));
    } else text.data = k.list.map((m) => m.text).join('');
    shown = k.list.slice();
    count.textContent = k.list.length + (k.list.length === 1 ? ' frame' : ' frames') +
      (k.dropped ? ' (' + k.dropped + ' older dropped)' : '');
  };
  // One redraw per animation frame, for all the frames that came meanwhile:
  // a redraw lays the whole text out again, and a burst of 1,000 frames
  // redrawn one by one froze the tab.
  let drawing = false;
  const w = { runId, fn: () => {
    if (!log.isConnected) { watchers.delete(w); return; }
    if (drawing) return;
    drawing = true;
    requestAnimationFrame(() => {
      drawing = false;
      const follow = log.scrollTop + log.clientHeight >= log.scrollHeight - 2;
      show();
      if (follow) log.scrollTop = log.scrollHeight;
    });
  } };
  watchers.add(w);
  const describe = (s) => {
    state.textContent = s === 'live'
      ? 'Mirrored from the control-plane stream (GET /__admin/stream, run.event); the application\'s own stream is left alone.'
      : 'The control-plane stream is ' + s + ': frames appear when it is live.';
  };
  describe(stream.state);
  let off = null;
  off = stream.onState((s) => {
    if (!state.isConnected) { if (off) off(); return; }
    describe(s);
  });
  show();
  return h('section', { class: 'panel', 'aria-labelledby': 'watch-h' },
    h('h2', { id: 'watch-h' }, 'Watch ', count), state, log,
    h('button', { type: 'button', class: 'quiet', onclick: () => { frames.set(runId, kept()); show(); } }, 'Clear'));
}
