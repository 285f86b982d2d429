// The console's only way to the emulator: calls to /__admin on the page's own
// origin, each carrying the admin key from session storage, and the
// control-plane stream read with fetch (EventSource cannot send the key).

// The control-plane base: the page lives at <prefix>/__admin/ui/, where
// <prefix> is "" or /ns/<name> or a proxy's path.
export const base = location.pathname.replace(/\/__admin\/ui(\/.*)?$/, '') + '/__admin';

const keyItem = 'hermes-console.admin-key';
const nsItem = 'hermes-console.namespace';

// Behind a /ns/<name> prefix the page starts in that namespace: every call
// carries ?namespace=, which the emulator prefers to the prefix, so a choice
// kept from the plain console would otherwise show another namespace.
const prefixed = /\/ns\/([^/]+)\/__admin\/ui(\/.*)?$/.exec(location.pathname);
if (prefixed) sessionStorage.setItem(nsItem, prefixed[1]);

export function adminKey() { return sessionStorage.getItem(keyItem) || ''; }
export function setAdminKey(k) {
  if (k) sessionStorage.setItem(keyItem, k); else sessionStorage.removeItem(keyItem);
}
export function namespace() { return sessionStorage.getItem(nsItem) || 'default'; }
export function setNamespace(ns) { sessionStorage.setItem(nsItem, ns || 'default'); }

// Listeners of 401 answers, called with the message and the key the request
// carried (the shell asks for the key).
const unauthorized = [];
export function onUnauthorized(fn) { unauthorized.push(fn); }

// request describes one control call without sending it: method, the full
// URL (with ?namespace=) and the JSON body text ('' when none).
export function request(method, path, body, query) {
  const q = new URLSearchParams(query || {});
  if (!q.has('namespace')) q.set('namespace', namespace());
  const url = location.origin + base + path + '?' + q.toString();
  const text = body === undefined ? '' : JSON.stringify(body);
  return { method, url, body: text };
}

// send performs a request from request(): it resolves to {status, ok, data,
// text, message}; data is the parsed JSON answer (or null), message the
// envelope's error message — or, for a failure without one (a proxy's 502
// page), the start of the answer's text or its status text. It never
// rejects: a network failure is status 0.
export async function send(req) {
  const headers = {};
  const k = adminKey();
  if (k) headers['x-mockingbird-admin-key'] = k;
  if (req.body) headers['content-type'] = 'application/json';
  let res;
  try {
    res = await fetch(req.url, { method: req.method, headers, body: req.body || undefined, cache: 'no-store' });
  } catch (e) {
    return { status: 0, ok: false, data: null, text: '', message: 'network error: ' + e.message };
  }
  const text = await res.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }
  let message = data && data.error && typeof data.error.message === 'string' ? data.error.message : '';
  if (!message && !res.ok) message = text.trim().slice(0, 200) || res.statusText || 'no message';
  if (res.status === 401) unauthorized.forEach((fn) => fn(message, k));
  return { status: res.status, ok: res.ok, data, text, message };
}

// call is request + send.
export function call(method, path, body, query) { return send(request(method, path, body, query)); }

// missing reports whether an answer says the route does not exist in this
// build (a 404 of the router, not of a resource).
export function missing(res) {
  return res.status === 404 && /^no admin route /.test(res.message || '');
}

function shellQuote(s) { return "'" + s.replace(/'/g, "'\\''") + "'"; }

// curl renders a request as a curl command line; the key is referenced as
// $MOCKINGBIRD_ADMIN_KEY, never written out.
export function curl(req) {
  const parts = ['curl -sS ' + (req.method !== 'GET' ? '-X ' + req.method + ' ' : '') + shellQuote(req.url)];
  if (adminKey()) parts.push('-H "x-mockingbird-admin-key: $MOCKINGBIRD_ADMIN_KEY"');
  if (req.body) {
    parts.push("-H 'content-type: application/json'");
    parts.push('-d ' + shellQuote(req.body));
  }
  return parts.join(' \\\n  ');
}

// Stream reads GET /__admin/stream for the current namespace and hands every
// frame {event, data, id, raw} to its listeners. It reconnects after an
// error; state listeners learn 'live', 'connecting', 'unavailable' (no such
// route: the views poll instead) or 'unauthorized'.
export class Stream {
  constructor() { this.frames = []; this.states = new Set(); this.ctrl = null; this.state = 'connecting'; }
  onFrame(fn) { this.frames.push(fn); }
  // onState calls fn with the current state and every later one; the
  // returned func stops that.
  onState(fn) { this.states.add(fn); fn(this.state); return () => this.states.delete(fn); }
  set(state) { this.state = state; this.states.forEach((fn) => fn(state)); }
  restart() {
    if (this.ctrl) this.ctrl.abort();
    clearTimeout(this.timer);
    this.ctrl = new AbortController();
    this.run(this.ctrl);
  }
  async run(ctrl) {
    this.set('connecting');
    const req = request('GET', '/stream');
    const headers = { accept: 'text/event-stream' };
    if (adminKey()) headers['x-mockingbird-admin-key'] = adminKey();
    let retry = 2000;
    try {
      const res = await fetch(req.url, { headers, signal: ctrl.signal, cache: 'no-store' });
      if (res.status === 404) { this.set('unavailable'); retry = 15000; }
      else if (res.status === 401) { this.set('unauthorized'); retry = 5000; }
      else if (!res.ok || !res.body) { this.set('error ' + res.status); }
      else {
        this.set('live');
        await this.read(res.body.getReader(), ctrl);
        this.set('connecting');
      }
    } catch (e) {
      if (ctrl.signal.aborted) return;
      this.set('connecting');
    }
    if (!ctrl.signal.aborted) this.timer = setTimeout(() => this.run(ctrl), retry);
  }
  async read(reader, ctrl) {
    const dec = new TextDecoder();
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done || ctrl.signal.aborted) return;
      buf += dec.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
      let cut;
      while ((cut = buf.indexOf('\n\n')) >= 0) {
        const raw = buf.slice(0, cut);
        buf = buf.slice(cut + 2);
        const frame = parseFrame(raw);
        if (frame) this.frames.forEach((fn) => fn(frame));
      }
    }
  }
}

// parseFrame reads one SSE frame: event, id and the joined data lines, with
// data parsed as JSON when it is JSON. Comment-only frames are null.
export function parseFrame(raw) {
  let event = 'message', id = '', data = [], seen = false;
  for (const line of raw.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const i = line.indexOf(':');
    const field = i < 0 ? line : line.slice(0, i);
    let value = i < 0 ? '' : line.slice(i + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    seen = true;
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
    else if (field === 'id') id = value;
  }
  if (!seen) return null;
  const text = data.join('\n');
  let json = null;
  try { json = JSON.parse(text); } catch (e) { json = null; }
  return { event, id, data: json, text, raw };
}
