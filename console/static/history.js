// History: the request journal (controls §7), the timeline of checkpoints and
// branches (controls §8) and the scenarios (scenarios §4, when present).
import { call, missing, namespace } from './api.js';
import { h, field, checkbox, requestCard, when, json, toast, confirmDialog, notAvailable, throttle, only } from './ui.js';
import { liveTable, morph, patchText } from './live.js';

// keyed names journal entries (oldest first) for a live table: by their
// content and, among equal entries, by their place counted from the oldest,
// which a newer entry does not change.
function keyed(entries) {
  const seen = new Map();
  return entries.map((e) => {
    const text = JSON.stringify(e);
    const n = (seen.get(text) || 0) + 1;
    seen.set(text, n);
    return { key: n + ' ' + text, e };
  });
}

const journalColumns = [
  { label: 'At', cell: ({ e }) => when(e.at) },
  { label: 'Namespace', cell: ({ e }) => e.namespace },
  { label: 'Request', cell: ({ e }) => h('code', {}, e.method + ' ' + e.path) },
  { label: 'Operation', cell: ({ e }) => e.operationId || '(unmatched)' },
  { label: 'Status', cell: ({ e }) => h('span', { class: e.status >= 400 || e.status === 0 ? 'bad' : '' }, String(e.status)) },
  { label: 'ms', cell: ({ e }) => String(e.durationMs) },
  { label: 'Fault', cell: ({ e }) => e.faultId || '' },
  { label: 'Run', cell: ({ e }) => e.ids && e.ids.runId ? h('a', { href: '#/runs/' + encodeURIComponent(e.ids.runId) }, e.ids.runId) : '' },
];

export function journalView(ctx) {
  const op = field('Operation', { placeholder: 'RunCreate', size: '14' });
  const status = field('Status', { placeholder: '503', size: '4', inputmode: 'numeric' });
  const limit = field('Last', { value: '100', size: '4', inputmode: 'numeric' });
  const all = checkbox('All namespaces', false);
  const live = checkbox('Live', true);
  const body = h('div', { id: 'journal-body', 'aria-live': 'polite' });
  const list = liveTable(journalColumns, (r) => r.key);
  const older = h('p', { class: 'hint' }, 'Older matching entries remain: raise "Last" or narrow the filter.');
  // The filter and answer on screen: the same again is not redrawn.
  let shown = '';
  // The text fields as last applied (Filter or Enter): a poll reads these,
  // never what is being typed. All namespaces applies itself.
  let applied = {};
  function apply() {
    applied = {};
    if (op.input.value.trim()) applied.operationId = op.input.value.trim();
    if (status.input.value.trim()) applied.status = status.input.value.trim();
    if (limit.input.value.trim()) applied.limit = limit.input.value.trim();
  }
  async function load() {
    const q = Object.assign({}, applied);
    if (all.input.checked) q.all = '1';
    const res = await call('GET', '/requests', undefined, q);
    if (!res.ok) { shown = ''; only(body, h('p', { class: 'notice bad' }, res.status + ' ' + res.message)); return; }
    if (JSON.stringify(q) + res.text === shown) return;
    shown = JSON.stringify(q) + res.text;
    if (body.firstChild !== list) body.replaceChildren(list, older);
    older.hidden = !res.data.next;
    list.update('Vendor requests, newest first (journal keeps ' + res.data.size + ' a namespace)',
      keyed(res.data.requests || []).reverse(), 'No requests journaled' + (Object.keys(q).length ? ' that match.' : '.'));
  }
  const form = h('form', { class: 'toolbar', onsubmit: (ev) => { ev.preventDefault(); apply(); load(); } },
    op, status, limit, all, live, h('button', {}, 'Filter'),
    h('button', { type: 'button', class: 'danger', onclick: async () => {
      if (!(await confirmDialog('Clear the journal?', all.input.checked ? 'Every namespace\'s entries go.' : 'This namespace\'s entries go.'))) return;
      const x = await call('DELETE', '/requests', undefined, all.input.checked ? { all: '1' } : {});
      toast(x.ok ? 'Journal cleared' : x.status + ' ' + x.message); load();
    } }, 'Clear'));
  all.input.addEventListener('change', load);
  live.input.addEventListener('change', load);
  ctx.every(1500, () => { if (live.input.checked) load(); });
  ctx.reload(load);
  ctx.main.append(h('section', { class: 'panel', 'aria-labelledby': 'journal-h' },
    h('h2', { id: 'journal-h' }, 'Journal'),
    h('p', { class: 'hint' }, 'Every vendor request, without bodies, keys or texts. Live refreshes it every 1.5 s with the filter last applied (Filter or Enter).'), form, body));
  apply();
  load();
}

// tree orders checkpoints as a tree: children after their parent, indented.
function tree(cps) {
  const kids = new Map();
  const ids = new Set(cps.map((c) => c.id));
  for (const c of cps) {
    const p = c.parent && ids.has(c.parent) ? c.parent : '';
    if (!kids.has(p)) kids.set(p, []);
    kids.get(p).push(c);
  }
  // A loop with its own stack, not recursion: a chain of checkpoints is as
  // deep as --max-checkpoints, past the browser's call stack.
  const out = [];
  const todo = (kids.get('') || []).map((c) => [c, 0, '']).reverse();
  while (todo.length) {
    const [c, d, pb] = todo.pop();
    const dd = d + (pb && c.branch !== pb ? 1 : 0);
    out.push([c, dd]);
    (kids.get(c.id) || []).slice().reverse().forEach((k) => todo.push([k, dd, c.branch]));
  }
  return out;
}

export function timelineView(ctx) {
  const body = h('div', { id: 'timeline-body', 'aria-live': 'polite' });
  // The branch heads: a head that moves is rewritten, the others (and a
  // selection in them) stay.
  const heads = h('p', {});
  const list = liveTable([
    { label: 'Checkpoint', cell: ({ c, d }) => h('code', { class: 'd' + Math.min(d, 6) }, c.id) },
    { label: 'Branch', cell: ({ c, head }) => c.branch + (head ? ' (head)' : '') },
    { label: 'Parent', cell: ({ c }) => c.parent || '' },
    { label: 'At', cell: ({ c }) => when(c.at) },
    { label: 'Checkout', cell: ({ c }) => h('button', { type: 'button', class: 'quiet', 'aria-label': 'Check out ' + c.id + ' on ' + c.branch,
      onclick: async () => {
        if (!(await confirmDialog('Check out ' + c.id + '?', 'Branch ' + c.branch + ' moves to ' + c.id + ': its runs, the clock and the fault RNG go back to that moment, and its open event streams end.'))) return;
        const x = await call('POST', '/branches/' + encodeURIComponent(c.branch) + '/checkout', { checkpoint: c.id });
        toast(x.ok ? 'Checked out ' + c.id : x.status + ' ' + x.message); load();
      } }, 'Checkout') },
  ], (r) => r.c.id);
  async function load() {
    const res = await call('GET', '/timeline');
    if (!res.ok) { only(body, h('p', { class: 'notice bad' }, res.status + ' ' + res.message)); return; }
    const branches = res.data.branches || {};
    const headOf = new Map(Object.entries(branches).map(([b, id]) => [id, b]));
    const rows = tree(res.data.checkpoints || []).reverse().map(([c, d]) => ({ c, d, head: headOf.get(c.id) === c.branch }));
    if (body.firstChild !== heads) body.replaceChildren(heads, list);
    const pills = Object.entries(branches).map(([b, id]) => b + ' → ' + id);
    morph(heads, h('p', {}, 'Branch heads: ', pills.map((p) => h('span', { class: 'pill' }, p))));
    list.update('Checkpoints, newest first (indented: a branch off its parent)', rows,
      'No timeline yet: it starts with the first change in this namespace.');
  }
  const branch = field('Branch', { value: 'main' });
  const name = field('New branch', { value: 'try-1' });
  const at = field('From checkpoint (optional)', { placeholder: 'cp_00000001' });
  // A commit adds a checkpoint (every accepted request is one), a checkout
  // or a branch placed moves a head, a reset empties the timeline.
  const soon = throttle(load);
  ctx.live((f) => { if (/^(checkpoint|branch\.restored|namespace\.reset)$/.test(f.event)) soon(); });
  ctx.every(3000, () => { if (ctx.stream.state !== 'live') load(); });
  ctx.reload(load);
  ctx.main.append(
    h('section', { class: 'panel', 'aria-labelledby': 'timeline-h' }, h('h2', { id: 'timeline-h' }, 'Timeline'),
      h('div', { class: 'toolbar' }, h('button', { type: 'button', onclick: load }, 'Refresh')), body),
    h('div', { class: 'cards' },
      requestCard('Commit a checkpoint', { name: 'checkpoint', label: 'Commit', fields: [branch] },
        () => ({ method: 'POST', path: '/checkpoints', body: { branch: branch.input.value } }), load),
      requestCard('Create or move a branch', { name: 'branch', label: 'Create branch', fields: [name, at] }, () => {
        const b = at.input.value.trim() ? { at: at.input.value.trim() } : undefined;
        return { method: 'POST', path: '/branches/' + encodeURIComponent(name.input.value), body: b };
      }, load)));
  load();
}

// sample is what the load form offers when the namespace has no set: two
// steps that move a new run to completed half a second after admission.
const sample = { scenarios: [{ name: 'quick', steps: [
  { after: '100ms', observe: { status: 'running' } },
  { after: '400ms', observe: { status: 'completed', output: 'Done.' } },
] }] };

// matchText renders a scenario's match ("every run" when it has none).
function matchText(m) {
  const parts = Object.entries(m || {}).map(([k, v]) => k + ' ' + (k === 'model' ? '= ' : '~ ') + v);
  return parts.length ? parts.join(', ') : 'every run';
}

// steps renders the length of a step list, or what stands in for an absent
// one (if_denied: fail the run; on_stop: cancel it).
function steps(list, absent) { return Array.isArray(list) ? String(list.length) : absent; }

export function scenariosView(ctx) {
  const body = h('div', { id: 'scenarios-body', 'aria-live': 'polite' });
  const text = field('Scenario set (JSON form of the file)', { rows: '14', spellcheck: 'false', value: '' }, 'textarea');
  // A refresh (Refresh, a load, a removal) updates the table and the JSON
  // in place, as in the other views: a selection in them, the JSON section
  // open, focused and scrolled stay. Names are unique in a set.
  const list = liveTable([
    { label: 'Name', cell: (c) => h('code', {}, c.name) },
    { label: 'Match', cell: (c) => matchText(c.match) },
    { label: 'Steps', cell: (c) => steps(c.steps, '0') },
    { label: 'If denied', cell: (c) => steps(c.if_denied, 'default: fail') },
    { label: 'On stop', cell: (c) => steps(c.on_stop, 'default: cancel') },
    { label: 'Steers', cell: (c) => c.steers || 'keep' },
  ], (c) => c.name);
  const setJSON = document.createTextNode('');
  const set = h('details', { class: 'sub' }, h('summary', {}, 'The set (JSON)'),
    h('pre', { class: 'json', tabindex: '0', 'aria-label': 'Current scenarios' }, setJSON));
  // The load form is offered a set once: a form the user emptied stays empty.
  let offered = false;
  async function load() {
    const res = await call('GET', '/hermes/scenarios');
    if (missing(res)) { only(body, notAvailable('Scenarios (GET /__admin/hermes/scenarios) are')); editor.hidden = true; return; }
    editor.hidden = false;
    if (!res.ok) { only(body, h('p', { class: 'notice bad' }, res.status + ' ' + res.message)); return; }
    const got = (res.data && res.data.scenarios) || [];
    if (body.firstChild !== list) body.replaceChildren(list, set);
    list.update('Scenarios of ' + namespace() + ', in match order (the first whose match holds drives a new run)', got,
      'No scenarios in namespace ' + namespace() + ': its runs move only when the control plane moves them.');
    patchText(setJSON, json(res.data));
    if (!offered && !text.input.value) { text.input.value = json(got.length ? res.data : sample); put.refresh(); }
    offered = true;
  }
  const put = requestCard('Load scenarios', { name: 'put-scenarios', label: 'Load', fields: [text],
    hint: ['Replaces this namespace\'s set for new runs; runs already admitted keep theirs. A YAML file: start the emulator with ',
      h('code', {}, 'serve --scenarios FILE'), ', or send its JSON form.'] }, () => {
    let v;
    try { v = JSON.parse(text.input.value || 'null'); } catch (e) { throw new Error('Not valid JSON: ' + e.message); }
    return { method: 'PUT', path: '/hermes/scenarios', body: v };
  }, load);
  const del = requestCard('Remove scenarios', { name: 'delete-scenarios', label: 'Remove', danger: true,
    hint: 'Runs already admitted keep their scenario.',
    confirm: 'The namespace will have no scenarios (not even the serve --scenarios default) until the next load.' },
  () => ({ method: 'DELETE', path: '/hermes/scenarios' }), load);
  const editor = h('div', { class: 'split' }, put, del);
  ctx.reload(load);
  ctx.main.append(h('section', { class: 'panel', 'aria-labelledby': 'scen-h' }, h('h2', { id: 'scen-h' }, 'Scenarios'),
    h('p', { class: 'hint' }, 'Runs that move by themselves: each step is a Hermes control fired on the emulator clock (a frozen clock fires them when it is advanced).'),
    h('div', { class: 'toolbar' }, h('button', { type: 'button', onclick: load }, 'Refresh')), body), editor);
  load();
}
