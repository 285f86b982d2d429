// Runs: the namespace's runs (GET /__admin/hermes/runs), live through the
// control-plane stream, and one run's page (GET /__admin/hermes/runs/{id})
// with the agent's controls and the watch panel.
import { call, missing, namespace } from './api.js';
import { h, field, table, when, badge, json, notAvailable, throttle } from './ui.js';
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
// (run.created, run.changed, run.removed; a checkout moves runs too).
function runChanged(f) { return /^run\.(created|changed|removed)$/.test(f.event) || f.event === 'checkpoint'; }

export function runsView(ctx) {
  const filter = field('Status', {}, 'select');
  filter.input.append(h('option', { value: '' }, 'any status'), ...statuses.map((s) => h('option', { value: s }, s)));
  filter.input.value = sessionStorage.getItem('hermes-console.status') || '';
  const body = h('div', { 'aria-live': 'polite', 'aria-busy': 'false', id: 'runs-body' });
  const more = h('button', { type: 'button', hidden: true }, 'Load more');
  // One load at a time: a Load more (wantMore) or a refresh (again) asked
  // for meanwhile runs after it, the Load more first.
  let cursor = '', rows = [], loading = false, again = false, wantMore = false;

  async function load(append) {
    if (loading) { if (append) wantMore = true; else again = true; return; }
    loading = true;
    // A refresh reloads as many runs as are shown (a page at least).
    const q = { limit: String(append ? 50 : Math.min(1000, Math.max(50, rows.length))) };
    if (filter.input.value) q.status = filter.input.value;
    if (append && cursor) q.cursor = cursor;
    const res = await call('GET', '/hermes/runs', undefined, q);
    loading = false;
    show(res, append);
    if (wantMore) { wantMore = false; load(true); } else if (again) { again = false; load(false); }
  }

  function show(res, append) {
    if (missing(res)) { body.replaceChildren(notAvailable('The run listing (GET /__admin/hermes/runs) is')); return; }
    if (!res.ok) { body.replaceChildren(h('p', { class: 'notice bad' }, res.status + ' ' + (res.message || res.text))); return; }
    const d = res.data || {};
    const page = d.runs || [];
    rows = append ? rows.concat(page) : page;
    cursor = d.next || '';
    more.hidden = !cursor;
    body.replaceChildren(table('Runs in ' + namespace() + ', newest first', [
      { label: 'Run', cell: (r) => h('a', { href: '#/runs/' + encodeURIComponent(r.run_id) }, r.run_id) },
      { label: 'Status', cell: (r) => badge(r.status) },
      { label: 'Created', cell: (r) => when(r.created_at) },
      { label: 'Updated', cell: (r) => when(r.updated_at) },
      { label: 'Keyed', cell: (r) => r.keyed ? 'yes' : 'no' },
      { label: 'Owner', cell: owner },
      { label: 'Approvals', cell: (r) => count(r.pending_approvals) },
      { label: 'Steers', cell: (r) => count(r.queued_steers) },
      { label: 'Transport', cell: (r) => r.transport || '' },
    ], rows, 'No runs in namespace ' + namespace() + (filter.input.value ? ' with status ' + filter.input.value : '') + ' yet.'));
  }

  filter.input.addEventListener('change', () => { sessionStorage.setItem('hermes-console.status', filter.input.value); load(false); });
  more.addEventListener('click', () => load(true));
  const soon = throttle(() => load(false));
  ctx.live((f) => { if (runChanged(f)) soon(); });
  ctx.every(3000, () => { if (ctx.stream.state !== 'live') load(false); });
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

// scenario renders a run's scenario position (docs/scenarios.md §6): its
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
  async function load() {
    const res = await call('GET', '/hermes/runs/' + encodeURIComponent(id));
    if (missing(res)) { summary.replaceChildren(notAvailable('The run view (GET /__admin/hermes/runs/{id}) is')); return; }
    if (!res.ok) { summary.replaceChildren(h('p', { class: 'notice bad' }, res.status + ' ' + (res.message || res.text))); return; }
    const v = res.data || {};
    const rec = v.record || {};
    play.setStatus(rec.status);
    summary.replaceChildren(
      facts(v),
      listBlock('Pending approvals', v.approvals, (a) => h('code', {}, JSON.stringify(a))),
      listBlock('Queued steers', v.steers, (s) => s),
      h('details', { class: 'sub' }, h('summary', {}, 'Record and full view (JSON)'), h('pre', { class: 'json' }, json(v))));
  }
  const soon = throttle(load);
  ctx.live((f) => {
    if (!runChanged(f)) return;
    const d = f.data || {};
    if (d.run_id && d.run_id !== id) return;
    soon();
  });
  ctx.every(3000, () => { if (ctx.stream.state !== 'live') load(); });
  ctx.main.append(
    h('p', {}, h('a', { href: '#/runs' }, '← All runs')),
    h('div', { class: 'split' }, h('section', { class: 'panel', 'aria-labelledby': 'run-h' }, head, summary), watchPanel(id, ctx.stream)),
    play);
  load();
}
