// The console shell: namespace picker, admin key, the control-plane stream
// and the hash router that shows one view at a time.
import { call, namespace, setNamespace, adminKey, setAdminKey, onUnauthorized, Stream } from './api.js';
import { h } from './ui.js';
import { runsView, runView } from './runs.js';
import { clockView, faultsView } from './controls.js';
import { journalView, timelineView, scenariosView } from './history.js';
import { watchFrame } from './watch.js';

// The stream is shared by every view; views subscribe with live(fn) and are
// unsubscribed when the route changes.
export const stream = new Stream();
let viewListeners = [];
stream.onFrame((f) => {
  watchFrame(f);
  viewListeners.forEach((fn) => fn(f));
});

const views = {
  runs: runsView, run: runView, clock: clockView, faults: faultsView,
  journal: journalView, timeline: timelineView, scenarios: scenariosView,
};

// ctx is what a view receives: where to draw, the route's argument, and
// live(fn) to hear stream frames while the view is shown; every(ms, fn)
// repeats fn while the view is shown.
function render() {
  const main = document.getElementById('main');
  const [, name = 'runs', ...rest] = location.hash.replace(/^#/, '').split('/');
  let arg = rest.join('/');
  try { arg = decodeURIComponent(arg); } catch (e) { /* a bad escape: the text as it is */ }
  const key = name === 'runs' && arg ? 'run' : name;
  const view = views[key] || runsView;
  viewListeners = [];
  timers.forEach(clearInterval);
  timers = [];
  main.replaceChildren();
  document.getElementById('toast').classList.remove('show');
  document.querySelectorAll('nav a').forEach((a) => {
    if (a.dataset.view === (key === 'run' ? 'runs' : key)) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  });
  const ctx = {
    main, arg, stream,
    live: (fn) => viewListeners.push(fn),
    every: (ms, fn) => timers.push(setInterval(fn, ms)),
  };
  view(ctx);
  if (render.focus) main.focus();
  render.focus = true;
}
let timers = [];

async function loadNamespaces() {
  const input = document.getElementById('ns');
  input.value = namespace();
  const res = await call('GET', '/namespaces');
  const list = document.getElementById('ns-list');
  const names = res.ok && res.data && Array.isArray(res.data.namespaces) ? res.data.namespaces : [];
  list.replaceChildren(...['default', ...names.filter((n) => n !== 'default')].map((n) => h('option', { value: n })));
}

function setupNamespace() {
  const input = document.getElementById('ns');
  input.addEventListener('change', () => {
    const v = input.value.trim() || 'default';
    input.value = v;
    if (v === namespace()) return;
    setNamespace(v);
    stream.restart();
    render();
  });
  input.addEventListener('focus', loadNamespaces);
}

function setupKey() {
  const dialog = document.getElementById('key-dialog');
  const input = document.getElementById('key-input');
  const why = document.getElementById('key-why');
  const open = (msg) => {
    if (dialog.open) return;
    if (msg) why.textContent = 'The emulator answered: ' + msg + '. Enter the admin key; it is kept in this tab\'s session storage only.';
    input.value = adminKey();
    dialog.showModal();
  };
  document.getElementById('key-button').addEventListener('click', () => open(''));
  dialog.addEventListener('close', () => {
    if (dialog.returnValue === 'save') setAdminKey(input.value.trim());
    else if (dialog.returnValue === 'forget') setAdminKey('');
    else return;
    stream.restart();
    loadNamespaces();
    render();
  });
  onUnauthorized(open);
}

function setupStream() {
  const pill = document.getElementById('stream-state');
  stream.onState((s) => {
    pill.textContent = 'stream: ' + (s === 'unavailable' ? 'not available (polling)' : s);
    pill.dataset.state = s;
  });
}

setupKey();
setupNamespace();
setupStream();
window.addEventListener('hashchange', render);
loadNamespaces();
stream.restart();
render.focus = false;
render();
