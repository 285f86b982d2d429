// Runs: the namespace's runs (GET /__admin/hermes/runs), live through the
// control-plane stream, and one run's page (GET /__admin/hermes/runs/{id})
// with the agent's controls and the watch panel.
import { call, missing, namespace } from './api.js';
import { h, field, table, when, badge, json, notAvailable } from './ui.js';
import { playPanel } from './play.js';
import { watchPanel } from './watch.js';

export const statuses = ['queued', 'running', 'waiting_for_approval', 'stopping',
  'completed', 'failed', 'cancelled', 'interrupted'];

// pick returns the first of the named keys that o has.
export function pick(o, ...keys) {
  for (const k of keys) if (o && o[k] !== undefined && o[k] !== null) return o[k];
  return undefined;
}

// count renders a number or the length of a list.
function count(v) { return Array.isArray(v) ? v.length : v === undefined ? '' : String(v); }

function owner(o) {
  if (!o || typeof o !== 'object') return o === undefined ? '' : String(o);
  const parts = [];
  if ('local' in o) parts.push(o.local ? 'local' : 'foreign');
  if ('alive' in o) parts.push(o.alive ? 'alive' : 'stale');
  return parts.join(', ') || JSON.stringify(o);
}

// runChanged reports whether a stream frame is about runs.
function runChanged(f) { return /^run\./.test(f.event) || f.event === 'checkpoint' || f.event === 'reset'; }

export function runsView(ctx) {
  const filter = field('Status', {}, 'select');
  filter.input.append(h('option', { value: '' }, 'any status'), ...statuses.map((s) => h('option', { value: s }, s)));
  filter.input.value = sessionStorage.getItem('hermes-console.status') || '';
  const body = h('div', { 'aria-live': 'polite', 'aria-busy': 'false', id: 'runs-body' });
  const more = h('button', { type: 'button', hidden: true }, 'Load more');
  let cursor = '', rows = [], loading = false, again = false;

  async function load(append) {
    if (loading) { again = true; return; }
    loading = true;
    const q = { limit: '50' };
    if (filter.input.value) q.status = filter.input.value;
    if (append && cursor) q.cursor = cursor;
    const res = await call('GET', '/hermes/runs', undefined, q);
    loading = false;
    if (again) { again = false; load(false); return; }
    if (missing(res)) { body.replaceChildren(notAvailable('The run listing (GET /__admin/hermes/runs) is')); return; }
    if (!res.ok) { body.replaceChildren(h('p', { class: 'notice bad' }, res.status + ' ' + (res.message || res.text))); return; }
    const d = res.data || {};
    const page = pick(d, 'runs', 'items', 'data') || [];
    rows = append ? rows.concat(page) : page;
    cursor = pick(d, 'next_cursor', 'nextCursor', 'cursor') || '';
    more.hidden = !cursor;
    body.replaceChildren(table('Runs in ' + namespace() + ', newest first', [
      { label: 'Run', cell: (r) => { const id = pick(r, 'run_id', 'id'); return h('a', { href: '#/runs/' + encodeURIComponent(id) }, id); } },
      { label: 'Status', cell: (r) => badge(r.status) },
      { label: 'Created', cell: (r) => when(pick(r, 'created_at', 'createdAt')) },
      { label: 'Updated', cell: (r) => when(pick(r, 'updated_at', 'updatedAt')) },
      { label: 'Keyed', cell: (r) => { const k = pick(r, 'keyed'); return k === undefined ? '' : k ? 'yes' : 'no'; } },
      { label: 'Owner', cell: (r) => owner(pick(r, 'owner')) },
      { label: 'Approvals', cell: (r) => count(pick(r, 'pending_approvals', 'pendingApprovals', 'approvals')) },
      { label: 'Steers', cell: (r) => count(pick(r, 'queued_steers', 'queuedSteers', 'steers')) },
      { label: 'Transport', cell: (r) => { const t = pick(r, 'transport'); return t && typeof t === 'object' ? JSON.stringify(t) : t === undefined ? '' : String(t); } },
    ], rows, 'No runs in namespace ' + namespace() + (filter.input.value ? ' with status ' + filter.input.value : '') + ' yet.'));
  }

  filter.input.addEventListener('change', () => { sessionStorage.setItem('hermes-console.status', filter.input.value); load(false); });
  more.addEventListener('click', () => load(true));
  let pending = null;
  ctx.live((f) => { if (runChanged(f)) { clearTimeout(pending); pending = setTimeout(() => load(false), 100); } });
  ctx.every(3000, () => { if (ctx.stream.state !== 'live') load(false); });
  ctx.main.append(h('section', { class: 'panel', 'aria-labelledby': 'runs-h' },
    h('h2', { id: 'runs-h' }, 'Runs'),
    h('div', { class: 'toolbar' }, filter, h('button', { type: 'button', onclick: () => load(false) }, 'Refresh')),
    body, more));
  load(false);
}

// facts renders the known parts of a run view as a definition list.
function facts(v) {
  const rec = pick(v, 'record', 'run') || {};
  const rows = [
    ['Status', badge(rec.status || v.status)],
    ['Created', when(pick(rec, 'created_at'))],
    ['Updated', when(pick(rec, 'updated_at'))],
    ['Last event', pick(rec, 'last_event') || ''],
    ['Owner', owner(pick(v, 'owner'))],
    ['Reservation', json(pick(v, 'reservation', 'reservations', 'keys') ?? null)],
    ['Events', json(pick(v, 'events', 'event_counts', 'eventCounts') ?? null)],
    ['Subscriber', String(pick(v, 'subscriber', 'subscribed', 'subscriber_present') ?? '')],
    ['Scenario', json(pick(v, 'scenario', 'scenario_position', 'scenarioPosition') ?? null)],
  ];
  return h('dl', { class: 'facts' }, rows.map(([k, val]) => [h('dt', {}, k), h('dd', {}, val)]));
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
    const rec = pick(v, 'record', 'run') || v;
    play.setStatus(rec.status);
    summary.replaceChildren(
      facts(v),
      listBlock('Pending approvals', pick(v, 'pending_approvals', 'pendingApprovals', 'approvals'), (a) => h('code', {}, JSON.stringify(a))),
      listBlock('Queued steers', pick(v, 'queued_steers', 'queuedSteers', 'steers'), (s) => typeof s === 'string' ? s : JSON.stringify(s)),
      h('details', { class: 'sub' }, h('summary', {}, 'Record and full view (JSON)'), h('pre', { class: 'json' }, json(v))));
  }
  let pending = null;
  ctx.live((f) => {
    if (!runChanged(f)) return;
    const d = f.data || {};
    const rid = pick(d, 'run_id', 'runId', 'id') || (d.event && d.event.run_id);
    if (rid && rid !== id) return;
    clearTimeout(pending);
    pending = setTimeout(load, 100);
  });
  ctx.every(3000, () => { if (ctx.stream.state !== 'live') load(); });
  ctx.main.append(
    h('p', {}, h('a', { href: '#/runs' }, '← All runs')),
    h('section', { class: 'panel', 'aria-labelledby': 'run-h' }, head, summary),
    h('div', { class: 'split' }, play, watchPanel(id, ctx.stream)));
  load();
}
