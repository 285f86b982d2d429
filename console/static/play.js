// Play the agent: one card per Hermes control on a run (controls §11.1–11.3),
// each showing the exact request it sends, copyable as curl.
import { h, field, checkbox, requestCard, toast, setText } from './ui.js';

const enc = encodeURIComponent;

function observe(id, body) { return { method: 'POST', path: '/hermes/runs/' + enc(id) + '/observe', body }; }
function events(id, list) { return { method: 'POST', path: '/hermes/runs/' + enc(id) + '/events', body: { events: list } }; }

// tokens reads a token count field: an integer, or an error naming it.
function tokens(f, name) {
  const v = f.input.value.trim();
  if (!/^\d+$/.test(v)) throw new Error(name + ': expected a whole number of tokens');
  return Number(v);
}

export function playPanel(id, changed) {
  const status = h('span', { class: 'count' });
  const done = (res) => { toast('Sent: ' + res.status); changed(); };
  const cards = [];
  const card = (title, name, fields, spec, opts) => {
    cards.push(requestCard(title, Object.assign({ name, fields }, opts || {}), spec, done));
  };

  card('Running', 'running', [], () => observe(id, { status: 'running' }), { label: 'Mark running' });

  const cmd = field('Command', { value: 'rm -rf build/' });
  const desc = field('Description', { value: 'Clean the build directory' });
  card('Waiting for approval', 'approval', [cmd, desc], () => {
    const approval = { command: cmd.input.value };
    if (desc.input.value) approval.description = desc.input.value;
    return observe(id, { status: 'waiting_for_approval', approval });
  }, { label: 'Ask for approval' });

  const tool = field('Tool', { value: 'terminal' });
  const preview = field('Preview', { value: 'ls -la' });
  card('Tool started', 'tool-started', [tool, preview],
    () => events(id, [{ event: 'tool.started', tool: tool.input.value, preview: preview.input.value || null }]),
    { label: 'Start tool' });

  const tool2 = field('Tool', { value: 'terminal' });
  const dur = field('Duration (s)', { value: '0.764', inputmode: 'decimal' });
  const err = checkbox('Tool failed', false);
  card('Tool completed', 'tool-completed', [tool2, dur, err], () => {
    const d = Number(dur.input.value);
    if (dur.input.value.trim() === '' || !isFinite(d)) throw new Error('duration: expected a number of seconds');
    return events(id, [{ event: 'tool.completed', tool: tool2.input.value, duration: d, error: err.input.checked }]);
  }, { label: 'Complete tool' });

  const delta = field('Text', { value: 'Your project has ' });
  card('Message delta', 'delta', [delta],
    () => events(id, [{ event: 'message.delta', delta: delta.input.value }]), { label: 'Send delta' });

  const output = field('Output', { value: 'Done.', rows: '2' }, 'textarea');
  const inT = field('Input tokens', { value: '12', inputmode: 'numeric' });
  const outT = field('Output tokens', { value: '34', inputmode: 'numeric' });
  card('Complete', 'complete', [output, h('div', { class: 'inline' }, inT, outT)], () => {
    const i = tokens(inT, 'input tokens'), o = tokens(outT, 'output tokens');
    return observe(id, { status: 'completed', output: output.input.value,
      usage: { input_tokens: i, output_tokens: o, total_tokens: i + o } });
  }, { label: 'Complete run' });

  const error = field('Error', { value: 'agent run failed' });
  card('Fail', 'fail', [error], () => observe(id, { status: 'failed', error: error.input.value }),
    { label: 'Fail run', danger: true });

  card('Cancel', 'cancel', [], () => observe(id, { status: 'cancelled' }), { label: 'Cancel run', danger: true });

  card('Deliver steers', 'deliver', [],
    () => ({ method: 'POST', path: '/hermes/runs/' + enc(id) + '/steer/deliver' }),
    { label: 'Deliver queued steers', hint: 'The agent consumes the queued steer texts at a tool boundary.' });

  const panel = h('section', { class: 'panel', 'aria-labelledby': 'play-h' },
    h('h2', { id: 'play-h' }, 'Play the agent ', status),
    h('p', { class: 'hint' }, 'Each card sends one Hermes control to the emulator and shows the exact request; "Copy as curl" copies it for a shell.'),
    h('div', { class: 'cards' }, cards));
  panel.setStatus = (s) => setText(status, s ? '(now ' + s + ')' : '');
  return panel;
}
