// Small DOM helpers shared by the views: an element builder, a toast, a
// confirmation dialog and the request card that shows, copies and sends one
// control request.
import { request, send, curl } from './api.js';

// h builds an element: h('button', {type: 'button', onclick: fn}, 'Text', child…).
// Attributes named on… are listeners; null/false attributes are skipped.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, v);
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

let seq = 0;
// uid returns a fresh element id with the given stem, for label/for pairs.
export function uid(stem) { seq += 1; return stem + '-' + seq; }

// field is a labelled input: field('Tool', {value: 'terminal'}) → [label, input].
export function field(label, attrs, tag) {
  const id = uid('f');
  const input = h(tag || 'input', Object.assign({ id, name: id }, attrs || {}));
  if ((tag === 'textarea' || tag === 'select') && attrs && attrs.value !== undefined) input.value = attrs.value;
  const wrap = h('div', { class: 'field' }, h('label', { for: id }, label), input);
  wrap.input = input;
  return wrap;
}

// checkbox is a labelled checkbox.
export function checkbox(label, checked) {
  const id = uid('c');
  const input = h('input', { id, type: 'checkbox', checked: !!checked });
  const wrap = h('div', { class: 'field check' }, input, h('label', { for: id }, label));
  wrap.input = input;
  return wrap;
}

export function toast(msg) {
  const t = document.getElementById('toast');
  t.textContent = msg;
  t.classList.add('show');
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => t.classList.remove('show'), 4000);
}

// confirmDialog asks a yes/no question in the page's modal dialog.
export function confirmDialog(title, text) {
  const d = document.getElementById('confirm-dialog');
  d.querySelector('#confirm-title').textContent = title;
  d.querySelector('#confirm-text').textContent = text;
  d.returnValue = '';
  d.showModal();
  return new Promise((resolve) => d.addEventListener('close', () => resolve(d.returnValue === 'yes'), { once: true }));
}

// copyText puts text on the clipboard (the Clipboard API needs a secure
// context such as 127.0.0.1; elsewhere a selected scratch textarea is copied).
export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
  } catch (e) {
    const area = h('textarea', { class: 'scratch', 'aria-hidden': 'true' });
    area.value = text;
    document.body.append(area);
    area.select();
    document.execCommand('copy');
    area.remove();
  }
  toast('Copied as curl');
}

// json renders a value as indented JSON.
export function json(v) { return JSON.stringify(v, null, 2); }

// requestCard is a form that sends one control request. spec() returns
// {method, path, body, query} from the form's current values (or throws an
// Error whose message is shown); the card shows the exact request (method,
// path and query, body), copies it as curl (also kept in the form's
// data-curl), sends it, shows the answer and calls done(res) after a 2xx.
// opts: {name (data-action for tests), fields: [elements], confirm: text,
// label: button text}.
export function requestCard(title, opts, spec, done) {
  const pre = h('pre', { class: 'req', 'aria-label': 'Request for ' + title });
  const out = h('output', { class: 'res', 'aria-live': 'polite' });
  let current = null;
  const render = () => {
    try {
      const s = spec();
      current = request(s.method, s.path, s.body, s.query);
      setText(pre, current.method + ' ' + current.url.slice(location.origin.length) + (current.body ? '\n' + current.body : ''));
      form.dataset.curl = curl(current);
      pre.classList.remove('bad');
    } catch (e) {
      current = null;
      setText(pre, e.message);
      pre.classList.add('bad');
    }
  };
  const form = h('form', { class: 'card', 'data-action': opts.name || null },
    h('h3', {}, title), opts.hint ? h('p', { class: 'hint' }, opts.hint) : null,
    h('div', { class: 'fields' }, opts.fields || []),
    h('details', { class: 'reqbox', open: true }, h('summary', {}, 'Request'), pre,
      h('button', { type: 'button', class: 'quiet', onclick: () => current && copyText(curl(current)) }, 'Copy as curl')),
    h('div', { class: 'row' }, h('button', { type: 'submit', class: opts.danger ? 'danger' : 'primary' }, opts.label || 'Send')),
    out);
  form.addEventListener('input', render);
  form.addEventListener('change', render);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    render();
    if (!current) return;
    if (opts.confirm && !(await confirmDialog(title, opts.confirm))) return;
    const res = await send(current);
    out.textContent = (res.status || 'no answer') + ' ' + (res.data ? JSON.stringify(res.data) : res.message || res.text);
    out.className = 'res ' + (res.ok ? 'ok' : 'bad');
    if (res.ok && done) done(res);
  });
  render();
  form.refresh = render;
  return form;
}

// when formats epoch seconds or milliseconds (or an ISO string) as local ISO time.
export function when(v) {
  if (v === null || v === undefined || v === '') return '';
  let d;
  if (typeof v === 'number') d = new Date(v < 1e12 ? v * 1000 : v);
  else d = new Date(v);
  return isNaN(d) ? String(v) : d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

// throttle returns a func that runs fn 150 ms after its first call, once for
// all the calls in between: a busy stream refreshes a view (a fetch and a
// redraw) about six times a second, never more and never starved.
export function throttle(fn) {
  let timer = null;
  return () => {
    if (timer) return;
    timer = setTimeout(() => { timer = null; fn(); }, 150);
  };
}

// setText gives el the text s unless it shows s already: writing the same
// text again replaces its text node and clears a selection in it.
export function setText(el, s) { if (el.textContent !== s) el.textContent = s; }

// only makes el the content of box unless box shows the same already: a
// poll that keeps failing leaves its notice, and a selection in it, alone.
export function only(box, el) {
  if (box.childNodes.length !== 1 || !box.firstChild.isEqualNode(el)) box.replaceChildren(el);
}

// selecting reports whether the user's text selection (not a caret) touches el.
export function selecting(el) {
  const s = getSelection();
  return s.rangeCount > 0 && !s.isCollapsed && s.getRangeAt(0).intersectsNode(el);
}

export function badge(status) { return h('span', { class: 'badge s-' + status }, status); }

// notAvailable is the message a view shows when its route is missing.
export function notAvailable(what) {
  return h('p', { class: 'notice', role: 'note' }, what + ' not available in this emulator build.');
}
