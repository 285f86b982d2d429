// Runs: the namespace's runs (GET /__admin/hermes/runs), live through the
// control-plane stream, and one run's page (GET /__admin/hermes/runs/{id})
// with the agent's controls and the watch panel.
import { call, missing, namespace } from './api.js';
import { h, field, when, badge, json, notAvailable, throttle, only } from './ui.js';
import { liveTable, morph, patchText } from './live.js';
import { playPanel } from './play.js';
import { watchPanel } from './watch.js';

export const statuses = ['queued', 'running', 'waiting_for_approval', 'stopping',
  'completed', 'failed', 'cancelled', 'interrupted'];

// count renders a number or the length of a list.
function count(v) { return Array.isArray(v) ? v.length : v === undefined ? '' : String(v); }

// owner renders a run summary's owner flags (GET /__admin/hermes/runs).
function owner(r) {
  if (!r || r.owner_local === undefined) return '';
  return (r.owner_local ? 'local' : 'foreign') + ', ' + (r.owner_alive ? 'alive' : 'stale');
}

// runChanged reports whether a stream frame changes what the run views show
// (main's runs): run.created, run.changed, run.removed; a checkpoint, which
// follows changes no run frame names (the restart control); main's state
// replaced (branch.restored: a checkout, a snapshot restore,
// x-mockingbird-at); the namespace emptied (namespace.reset).
function runChanged(f) {
  return /^run\.(created|changed|removed)$/.test(f.event) || f.event === 'checkpoint' ||
    f.event === 'namespace.reset' || (f.event === 'branch.restored' && (f.data || {}).branch === 'main');
}

// Paging of the runs view: the first page and each Load more bring page runs;
// a refresh reloads in pages of at most pageMax (the listing's largest) and
// at most keepMax runs in all.
const page = 50, pageMax = 1000, keepMax = 10000;

// listedAfter reports whether run summary a comes after b in the listing
// (newest first: created_at, then run id, both descending; run ids are ASCII,
// so string order is the listing's byte order).
function listedAfter(a, b) {
  return a.created_at < b.created_at || (a.created_at === b.created_at && a.run_id < b.run_id);
}

const runColumns = [
  { label: 'Run', cell: (r) => h('a', { href: '#/runs/' + encodeURIComponent(r.run_id) }, r.run_id) },
  { label: 'Status', cell: (r) => badge(r.status) },
  { label: 'Created', cell: (r) => when(r.created_at) },
  { label: 'Updated', cell: (r) => when(r.updated_at) },
  { label: 'Keyed', cell: (r) => r.keyed ? 'yes' : 'no' },
  { label: 'Owner', cell: owner },
  { label: 'Approvals', cell: (r) => count(r.pending_approvals) },
  { label: 'Steers', cell: (r) => count(r.queued_steers) },
  { label: 'Transport', cell: (r) => r.transport || '' },
];

export function runsView(ctx) {
  const filter = field('Status', {}, 'select');
  filter.input.append(h('option', { value: '' }, 'any status'), ...statuses.map((s) => h('option', { value: s }, s)));
  filter.input.value = sessionStorage.getItem('hermes-console.status') || '';
  const list = liveTable(runColumns, (r) => r.run_id);
  const body = h('div', { 'aria-live': 'polite', 'aria-busy': 'false', id: 'runs-body' });
  const more = h('button', { type: 'button', hidden: true }, 'Load more');
  // What the view shows: rows, newest first; cursor, the listing's cursor
  // after them ('' when none remain); through, the last run Load more
  // brought (null before any Load more: a refresh then shows the newest
  // page, afterwards every run down to through, so a refresh never takes
  // away a run the user loaded).
  let rows = [], cursor = '', through = null;
  // One load at a time: a Load more (wantMore) or a refresh (again) asked
  // for meanwhile runs after it, the Load more first. A change of the status
  // filter starts over (gen counts them) and drops what a load on its way
  // brings.
  let loading = false, again = false, wantMore = false, gen = 0;

  function fetchPage(status, limit, after) {
    const q = { limit: String(limit) };
    if (status) q.status = status;
    if (after) q.cursor = after;
    return call('GET', '/hermes/runs', undefined, q);
  }

  // loadMore fetches the page after the last run shown: {res, rows, cursor, through}.
  async function loadMore(status) {
    const res = await fetchPage(status, page, cursor);
    if (!res.ok) return { res };
    const got = (res.data && res.data.runs) || [];
    return { res, rows: rows.concat(got), cursor: (res.data && res.data.next) || '', through: got.length ? got[got.length - 1] : through };
  }

  // reload fetches the runs from the newest down to through, at most
  // keepMax, page after page: each page starts at the cursor the previous
  // one ended with, so a run created or removed meanwhile is neither shown
  // twice nor skipped. The pages are sized to end at through when nothing
  // changed (past as many runs as shown, they are of pageMax); when through
  // falls inside one, that page is asked again ending there, for the cursor
  // after it. When no run down to through is left, it is the newest page
  // again.
  async function reload(status) {
    let got = [], after = '';
    for (;;) {
      const guess = rows.length - got.length;
      const limit = Math.min(pageMax, keepMax - got.length, guess > 0 ? guess : pageMax);
      let res = await fetchPage(status, limit, after);
      if (!res.ok) return { res };
      let part = (res.data && res.data.runs) || [];
      const cut = part.findIndex((r) => listedAfter(r, through));
      if (cut > 0) {
        res = await fetchPage(status, cut, after);
        if (!res.ok) return { res };
        part = (res.data && res.data.runs) || [];
      }
      const next = cut === 0 ? after : (res.data && res.data.next) || '';
      if (cut !== 0) got = got.concat(part);
      const end = part.length && part[part.length - 1].run_id === through.run_id;
      if (cut >= 0 || end || !next || got.length >= keepMax) {
        if (!got.length) return reloadHead(status);
        return { res, rows: got, cursor: next, through: got[got.length - 1] };
      }
      after = next;
    }
  }

  // reloadHead fetches the newest page.
  async function reloadHead(status) {
    const res = await fetchPage(status, page, '');
    if (!res.ok) return { res };
    return { res, rows: (res.data && res.data.runs) || [], cursor: (res.data && res.data.next) || '', through: null };
  }

  async function load(append) {
    if (loading) { if (append) wantMore = true; else again = true; return; }
    loading = true;
    const g = gen, status = filter.input.value;
    const got = await (append ? loadMore(status) : through ? reload(status) : reloadHead(status));
    loading = false;
    if (g === gen) {
      if (got.rows) ({ rows, cursor, through } = got);
      show(got.res);
    }
    // A Load more pressed twice while the first was on its way has nothing
    // to add when the first brought the last runs.
    const moreNext = wantMore && cursor !== '';
    wantMore = false;
    if (moreNext) load(true); else if (again) { again = false; load(false); }
  }

  function show(res) {
    if (missing(res)) { only(body, notAvailable('The run listing (GET /__admin/hermes/runs) is')); return; }
    if (!res.ok) { only(body, h('p', { class: 'notice bad' }, res.status + ' ' + (res.message || res.text))); return; }
    more.hidden = !cursor;
    if (body.firstChild !== list) body.replaceChildren(list);
    list.update('Runs in ' + namespace() + ', newest first', rows,
      'No runs in namespace ' + namespace() + (filter.input.value ? ' with status ' + filter.input.value : '') + ' yet.');
  }

  // startOver shows the newest page of runs again.
  function startOver() {
    rows = [];
    cursor = '';
    through = null;
    gen++;
    return load(false);
  }

  filter.input.addEventListener('change', () => {
    sessionStorage.setItem('hermes-console.status', filter.input.value);
    startOver();
  });
  more.addEventListener('click', () => load(true));
  const soon = throttle(() => load(false));
  ctx.live((f) => { if (runChanged(f)) soon(); });
  ctx.every(3000, () => { if (ctx.stream.state !== 'live') load(false); });
  // Another namespace starts over, as another status filter does.
  let ns = namespace();
  ctx.reload(() => {
    if (ns === namespace()) return load(false);
    ns = namespace();
    return startOver();
  });
  ctx.main.append(h('section', { class: 'panel', 'aria-labelledby': 'runs-h' },
    h('h2', { id: 'runs-h' }, 'Runs'),
    h('div', { class: 'toolbar' }, filter, h('button', { type: 'button', onclick: () => load(false) }, 'Refresh')),
    body, more));
  load(false);
}

// facts renders a run view (GET /__admin/hermes/runs/{id}) as a definition list.
function facts(v) {
  const rec = v.record || {};
  const rows = [
    ['Status', badge(rec.status || v.status)],
    ['Created', when(rec.created_at)],
    ['Updated', when(rec.updated_at)],
    ['Last event', rec.last_event || ''],
    ['Owner', owner(v)],
    ['Reservation', (v.reservation_keys || []).length ? v.reservation_keys.join(', ') : 'none (keyless)'],
    ['Events', (v.events_buffered ?? '') + ' buffered, ' + (v.events_delivered ?? '') + ' delivered; transport ' + (v.transport || '')],
    ['Subscriber', v.subscriber ? 'connected' : 'none'],
    ['Scenario', scenario(v.scenario)],
  ];
  return h('dl', { class: 'facts' }, rows.map(([k, val]) => [h('dt', {}, k), h('dd', {}, val)]));
}

// scenario renders a run's scenario position (scenarios §6): its
// name, the next step and when it falls due, or that it waits for an answer.
function scenario(p) {
  if (!p) return 'none';
  const next = typeof p.due === 'number' ? 'due ' + new Date(p.due).toISOString().replace('T', ' ') : 'waits for the approval answer';
  return h('span', { 'data-scenario': p.name }, p.name + ': next ' + p.step + ', ' + next);
}

function listBlock(title, items, render) {
  const list = Array.isArray(items) ? items : [];
  return h('section', { class: 'sub' }, h('h3', {}, title + ' (' + list.length + ')'),
    list.length ? h('ul', {}, list.map((x) => h('li', {}, render(x)))) : h('p', { class: 'empty' }, 'None.'));
}

export function runView(ctx) {
  const id = ctx.arg;
  const head = h('h2', { id: 'run-h' }, 'Run ', h('code', {}, id));
  const summary = h('div', { id: 'run-summary', 'aria-live': 'polite' });
  const play = playPanel(id, () => load());
  // A refresh changes only the facts that changed (a selection in another
  // stays: every checkpoint of the namespace refreshes the page); the JSON
  // section stays (open or closed, focused, scrolled) and only the lines of
  // its text that changed are rewritten (a selection in another stays).
  const info = h('div', {});
  const fullText = document.createTextNode('');
  const full = h('pre', { class: 'json' }, fullText);
  const more = h('details', { class: 'sub' }, h('summary', {}, 'Record and full view (JSON)'), full);
  async function load() {
    const res = await call('GET', '/hermes/runs/' + encodeURIComponent(id));
    if (missing(res)) { only(summary, notAvailable('The run view (GET /__admin/hermes/runs/{id}) is')); return; }
    if (!res.ok) { only(summary, h('p', { class: 'notice bad' }, res.status + ' ' + (res.message || res.text))); return; }
    const v = res.data || {};
    const rec = v.record || {};
    play.setStatus(rec.status);
    if (summary.firstChild !== info) summary.replaceChildren(info, more);
    morph(info, h('div', {},
      facts(v),
      listBlock('Pending approvals', v.approvals, (a) => h('code', {}, JSON.stringify(a))),
      listBlock('Queued steers', v.steers, (s) => s)));
    patchText(fullText, json(v));
  }
  const soon = throttle(load);
  ctx.live((f) => {
    if (!runChanged(f)) return;
    const d = f.data || {};
    if (d.run_id && d.run_id !== id) return;
    soon();
  });
  ctx.every(3000, () => { if (ctx.stream.state !== 'live') load(); });
  ctx.reload(load);
  ctx.main.append(
    h('p', {}, h('a', { href: '#/runs' }, '← All runs')),
    h('div', { class: 'split' }, h('section', { class: 'panel', 'aria-labelledby': 'run-h' }, head, summary), watchPanel(id, ctx.stream)),
    play);
  load();
}
