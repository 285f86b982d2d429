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
let reloads = []; // the shown view's reload(fn) funcs
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
// repeats fn while the view is shown; reload(fn) names a func that reads
// the view's data again and shows it in place (see refresh).
function render() {
  const main = document.getElementById('main');
  const [, name = 'runs', ...rest] = location.hash.replace(/^#/, '').split('/');
  let arg = rest.join('/');
  try { arg = decodeURIComponent(arg); } catch (e) { /* a bad escape: the text as it is */ }
  const key = name === 'runs' && arg ? 'run' : name;
  const view = views[key] || runsView;
  viewListeners = [];
  reloads = [];
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
    reload: (fn) => reloads.push(fn),
  };
  view(ctx);
  if (render.focus) main.focus();
  render.focus = true;
}
let timers = [];

// refresh shows the current view again after the admin key or the namespace
// changed: its data read anew and its request cards' requests (their key
// header, their ?namespace=), in place, so what the user was typing, the
// focus and their place stay (render would draw the view anew and lose them).
function refresh() {
  document.querySelectorAll('#main form.card').forEach((f) => f.refresh());
  return Promise.all(reloads.map((fn) => fn()));
}

// place is where the keyboard is: the focused element and, in a text
// field, its selection (the caret).
function place() {
  const el = document.activeElement;
  const sel = el && typeof el.selectionStart === 'number' ? [el.selectionStart, el.selectionEnd, el.selectionDirection] : null;
  return { el, sel };
}

// goBack puts the keyboard back at place p when its element is on the page.
function goBack(p) {
  if (!p || !p.el || p.el === document.body || !p.el.isConnected) return;
  p.el.focus();
  if (p.sel) p.el.setSelectionRange(...p.sel);
}

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
    refresh();
  });
  input.addEventListener('focus', loadNamespaces);
}

function setupKey() {
  const dialog = document.getElementById('key-dialog');
  const input = document.getElementById('key-input');
  const why = document.getElementById('key-why');
  // Closed, the dialog gives the keyboard back where it was (Chromium gives
  // the focus back but puts a text field's caret at its start).
  let was = null;
  // sent: the key the refused request carried. A key saved since has not
  // been refused yet: the calls the refresh makes with it tell.
  const open = (msg, sent) => {
    if (dialog.open || (sent !== undefined && sent !== adminKey())) return;
    if (msg) why.textContent = 'The emulator answered: ' + msg + '. Enter the admin key; it is kept in this tab\'s session storage only.';
    input.value = adminKey();
    was = place();
    dialog.showModal();
  };
  document.getElementById('key-button').addEventListener('click', () => open(''));
  dialog.addEventListener('close', async () => {
    const p = was;
    goBack(p);
    if (dialog.returnValue === 'save') setAdminKey(input.value.trim());
    else if (dialog.returnValue === 'forget') setAdminKey('');
    else return;
    stream.restart();
    loadNamespaces();
    await refresh();
    // A view that showed the 401's notice in its place took the focused
    // element off the page until the refresh put it back.
    if (document.activeElement === document.body) goBack(p);
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
