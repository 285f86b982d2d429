// Controls: the clock (controls §5) and fault rules and presets (controls §6).
import { call } from './api.js';
import { h, field, requestCard, when, json, toast, confirmDialog, throttle, setText, selecting, only } from './ui.js';
import { liveTable } from './live.js';

// clockChanged: the clock moved, or a checkout, a snapshot restore or
// x-mockingbird-at restored it (each sends a clock frame after its
// branch.restored).
function clockChanged(f) { return f.event === 'clock'; }

export function clockView(ctx) {
  // Only the time ticks: each fact is written when it changes, so a
  // selection elsewhere in the view stays.
  const time = h('span', { id: 'clock-time' });
  const held = h('span', { id: 'clock-held', class: 'hint', hidden: true }, ' (held while selected)');
  const now = h('dd', { id: 'clock-now' }, time, held);
  const frozen = h('dd', { id: 'clock-frozen' });
  const offset = h('dd', { id: 'clock-offset' });
  // tick: the poll of a running clock. Its time waits while a selection
  // touches it, so that it can be copied; a move of the clock (a control,
  // a clock frame) shows at once.
  async function load(tick) {
    const res = await call('GET', '/clock');
    if (!res.ok) { setText(time, res.status + ' ' + res.message); return; }
    const c = res.data;
    const hold = tick === true && selecting(time);
    held.hidden = !hold;
    if (!hold) setText(time, when(c.now) + '  (' + c.now + ' ms)');
    setText(frozen, c.frozen ? 'frozen' : 'running');
    // Frozen, the offset from the wall clock changes every millisecond.
    setText(offset, c.frozen ? 'none while frozen' : c.offsetMs + ' ms');
    // Set to is offered the time once: a field the user emptied stays empty.
    if (!offered && !set.input.value) { set.input.value = new Date(c.now).toISOString().replace(/\.\d+Z$/, 'Z'); setCard.refresh(); }
    offered = true;
  }
  let offered = false;
  const show = (res) => { toast('Clock: ' + (res.data && res.data.frozen ? 'frozen' : 'running')); load(); };
  const post = (body) => () => ({ method: 'POST', path: '/clock', body });
  const adv = field('Advance by', { value: '15m', 'aria-describedby': 'adv-hint' });
  const set = field('Set to', { placeholder: '2023-11-14T22:13:20Z or epoch ms' });
  const setCard = requestCard('Set', { name: 'set', label: 'Set', fields: [set] }, () => {
    const v = set.input.value.trim();
    return post({ set: /^\d+$/.test(v) ? Number(v) : v })();
  }, show);
  const soon = throttle(load); // one load for a burst of clock frames
  ctx.live((f) => { if (clockChanged(f)) soon(); });
  ctx.every(1000, () => { if (frozen.textContent !== 'frozen') load(true); });
  ctx.reload(load);
  ctx.main.append(
    h('section', { class: 'panel', 'aria-labelledby': 'clock-h' },
      h('h2', { id: 'clock-h' }, 'Clock'),
      h('p', { class: 'hint' }, 'One clock for every namespace: it drives created_at, event timestamps, sweeps and the journal.'),
      h('dl', { class: 'facts' }, h('dt', {}, 'Now'), now, h('dt', {}, 'State'), frozen, h('dt', {}, 'Offset'), offset)),
    h('div', { class: 'cards' },
      requestCard('Freeze', { name: 'freeze', label: 'Freeze' }, post({ freeze: true }), show),
      requestCard('Unfreeze', { name: 'unfreeze', label: 'Unfreeze' }, post({ freeze: false }), show),
      requestCard('Advance', { name: 'advance', label: 'Advance', fields: [adv, h('p', { id: 'adv-hint', class: 'hint' }, 'Milliseconds, or 90s, 15m, 2h, 3d.')] }, () => {
        const v = adv.input.value.trim();
        return post({ advance: /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : v })();
      }, show),
      setCard,
      requestCard('Back to the wall clock', { name: 'clock-reset', label: 'Reset clock' }, post({ reset: true }), show)));
  load();
}

// faultChanged: a rule fired (its counters moved).
function faultChanged(f) { return f.event === 'fault'; }

function match(r) {
  const parts = [];
  for (const k of ['namespace', 'operationId', 'method', 'pathPrefix']) if (r[k] !== undefined) parts.push(k + '=' + r[k]);
  return parts.join(' ');
}

function effect(r) {
  const parts = [];
  if (r.status !== undefined) parts.push('status ' + r.status);
  if (r.drop) parts.push('drop');
  if (r.delayMs !== undefined || r.latencyMs !== undefined) parts.push('delay ' + (r.delayMs ?? r.latencyMs) + ' ms');
  if (r.effect) parts.push(r.effect);
  if (r.rate !== undefined) parts.push('rate ' + r.rate);
  return parts.join(', ');
}

export function faultsView(ctx) {
  const list = h('div', { id: 'fault-list', 'aria-live': 'polite' });
  const presets = h('div', { id: 'preset-list' });
  const rules = liveTable([
    { label: 'Id', cell: (r) => h('code', {}, r.id) },
    { label: 'Matches', cell: match },
    { label: 'Does', cell: effect },
    { label: 'Remaining', cell: (r) => r.remaining === null ? 'unlimited' : String(r.remaining) },
    { label: 'Hits', cell: (r) => String(r.hits) },
    { label: 'Remove', cell: (r) => h('button', { type: 'button', class: 'quiet', 'aria-label': 'Remove fault ' + r.id,
      onclick: async () => { const x = await call('DELETE', '/faults', undefined, { id: r.id }); toast(x.ok ? 'Removed ' + r.id : x.status + ' ' + x.message); load(); } }, 'Remove') },
  ], (r) => r.id);
  async function load() {
    const res = await call('GET', '/faults');
    if (!res.ok) { only(list, h('p', { class: 'notice bad' }, res.status + ' ' + res.message)); return; }
    if (list.firstChild !== rules) list.replaceChildren(rules);
    rules.update('Fault rules, all namespaces, in matching order', res.data.faults || [],
      'No fault rules: every vendor request is answered normally.');
  }
  // The presets as shown: the same answer again is not drawn again (a
  // focused button keeps the focus).
  let shownPresets = '';
  async function loadPresets() {
    const res = await call('GET', '/faults/presets');
    if (!res.ok) { shownPresets = ''; only(presets, h('p', { class: 'notice bad' }, res.status + ' ' + res.message)); return; }
    if (res.text === shownPresets) return;
    shownPresets = res.text;
    presets.replaceChildren(h('ul', { class: 'presets' }, (res.data.presets || []).map((p) =>
      h('li', {}, h('button', { type: 'button', 'data-preset': p.name, onclick: async () => {
        const x = await call('POST', '/faults/presets/' + encodeURIComponent(p.name));
        toast(x.ok ? 'Added preset ' + p.name : x.status + ' ' + x.message); load();
      } }, 'Add ' + p.name), ' ', h('span', { class: 'hint' }, p.description)))));
  }
  const rule = field('Rule (JSON)', { rows: '4', spellcheck: 'false',
    value: json({ operationId: 'RunCreate', status: 503, count: 1 }) }, 'textarea');
  const add = requestCard('Add a fault rule', { name: 'add-fault', label: 'Add rule', fields: [rule],
    hint: 'Fields: id, operationId, method, pathPrefix, namespace, status, body, headers, count, rate, delayMs, drop, effect, params.' }, () => {
    let body;
    try { body = JSON.parse(rule.input.value); } catch (e) { throw new Error('The rule is not valid JSON: ' + e.message); }
    return { method: 'POST', path: '/faults', body };
  }, load);
  const clear = h('button', { type: 'button', class: 'danger', id: 'clear-faults', onclick: async () => {
    if (!(await confirmDialog('Clear every fault rule?', 'This removes the rules of every namespace.'))) return;
    const x = await call('DELETE', '/faults');
    toast(x.ok ? 'All fault rules removed' : x.status + ' ' + x.message);
    load();
  } }, 'Clear all rules');
  const soon = throttle(load); // a rule can fire on every request
  ctx.live((f) => { if (faultChanged(f)) soon(); });
  // The stream reports fired rules, not added or removed ones: poll as well.
  ctx.every(2000, load);
  ctx.reload(() => Promise.all([load(), loadPresets()]));
  ctx.main.append(
    h('section', { class: 'panel', 'aria-labelledby': 'faults-h' }, h('h2', { id: 'faults-h' }, 'Fault rules'),
      h('div', { class: 'toolbar' }, h('button', { type: 'button', onclick: load }, 'Refresh'), clear), list),
    h('div', { class: 'split' },
      h('section', { class: 'panel', 'aria-labelledby': 'presets-h' }, h('h2', { id: 'presets-h' }, 'Presets'), presets),
      add));
  load();
  loadPresets();
}
