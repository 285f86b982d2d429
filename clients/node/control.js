// A typed client of the emulator's control plane (/__admin, controls.md): script runs (observe, events,
// steer delivery), load scenarios, move the clock, add fault rules, reset, read the journal and the
// timeline. The types
// are in index.d.ts; the run record type is generated from openapi.yaml (types/openapi.d.ts).

/** No binary, the binary did not start, or the emulator a call needs is closed; the message says why. */
export class EmulatorError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = "EmulatorError";
  }
}

// The state a Control shares with every Control that in() derives from it: closed is why calls are refused
// ("" while the emulator runs). Only createServer's control is ever closed (markClosed, below); the key is
// module-private, so it is no option a user can pass.
const shared = Symbol("shared");

/**
 * Refuses every later call of control, and of every Control in() derived from it or derives later, with
 * EmulatorError(why). The first reason stays. Internal: index.js calls it when its server closes.
 * @param {Control} control
 * @param {string} why
 */
export function markClosed(control, why) {
  control[shared].closed ||= why;
}

/** How a bad argument reads in an error message: strings quoted, objects by kind. */
function shown(value) {
  if (typeof value === "string") return JSON.stringify(value);
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  if (typeof value === "function") return "a function";
  return String(value);
}

/**
 * Throws TypeError "<where>: <name> must be <what>, not <value>" unless ok: a bad argument fails at the
 * call, not as a confusing answer (a run "undefined", the default namespace for "") or a silent no-op.
 * Internal, as index.js uses it.
 */
export function check(ok, where, name, what, value) {
  if (!ok) throw new TypeError(`${where}: ${name} must be ${what}, not ${shown(value)}`);
}

/**
 * Checks a duration in ms for setTimeout and AbortSignal.timeout, which take integers up to 2^31 - 1 (a
 * larger one fires at once): TypeError for a non-number, RangeError out of min..2147483647.
 */
export function checkMs(where, name, value, min) {
  check(typeof value === "number", where, name, "a number of ms", value);
  if (!Number.isInteger(value) || value < min || value > 2 ** 31 - 1) {
    throw new RangeError(`${where}: ${name} must be a whole number of ms from ${min}${min === 0 ? " (no limit)" : ""} to 2147483647, not ${value}`);
  }
}

const isName = (value) => typeof value === "string" && value !== "";
const isAll = (value) => value === undefined || typeof value === "boolean";
const isObject = (value) => value !== null && typeof value === "object" && !Array.isArray(value);

/**
 * Checks the options object of a call against the names it takes, before anything is sent: a misspelt one
 * (statsu) answered the unfiltered page; the server now refuses it too (400 unknown query parameter).
 */
function checkNames(where, options, names) {
  check(isObject(options), where, "options", `an object (${names.join(", ")})`, options);
  for (const name of Object.keys(options)) {
    if (!names.includes(name)) throw new TypeError(`${where}: unknown option ${JSON.stringify(name)}; the options are ${names.join(", ")}`);
  }
}

/** A control answer outside 2xx: the status and the envelope's message (and code, for Hermes controls). */
export class ControlError extends Error {
  /**
   * @param {string} method
   * @param {string} path
   * @param {number} status
   * @param {string} body
   */
  constructor(method, path, status, body) {
    let message = body.trim();
    let type = "";
    let code = null;
    try {
      const env = JSON.parse(body)?.error;
      if (env && typeof env === "object") ({ message = message, type = "", code = null } = env);
    } catch {
      // not an envelope: the message is the body text
    }
    super(`control: ${method} ${path}: ${status} ${message}${code ? ` (${code})` : ""}`);
    this.name = "ControlError";
    this.method = method;
    this.path = path;
    this.status = status;
    this.type = type;
    this.code = code;
    this.body = body;
  }
}

/** The control plane of one emulator, acting in one namespace. Immutable; `in(ns)` makes another. */
export class Control {
  /**
   * @param {string} baseURL e.g. "http://127.0.0.1:8827"
   * @param {{ namespace?: string, adminKey?: string, timeoutMs?: number }} [options] timeoutMs: how long
   *   one control call may take, answer included (default 30000, as the Python client; 0 = no limit)
   */
  constructor(baseURL, options = {}) {
    check(typeof baseURL === "string" && /^https?:\/\/[^/]/.test(baseURL), "new Control", "baseURL", 'an http:// or https:// URL such as "http://127.0.0.1:8827"', baseURL);
    check(options !== null && typeof options === "object", "new Control", "options", "an object", options);
    check(options.namespace === undefined || isName(options.namespace), "new Control", "options.namespace", "a non-empty string", options.namespace);
    check(options.adminKey === undefined || typeof options.adminKey === "string", "new Control", "options.adminKey", "a string", options.adminKey);
    if (options.timeoutMs !== undefined) checkMs("new Control", "options.timeoutMs", options.timeoutMs, 0);
    this.baseURL = baseURL.replace(/\/$/, "");
    this.namespace = options.namespace;
    this.adminKey = options.adminKey;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    Object.defineProperty(this, shared, { value: options[shared] ?? { closed: "" } });
    const post = (body) => this.request("POST", "/__admin/clock", body);
    // An instant or a step: a number (epoch ms, ms) or the server's string forms ("2026-01-01T00:00:00Z",
    // "15m"); missing, it was left out of the body and the call changed nothing.
    const when = (name, arg, value) =>
      check((typeof value === "number" && Number.isFinite(value)) || isName(value), `control.clock.${name}`, arg, "a number or a string", value);
    this.clock = {
      get: async () => this.request("GET", "/__admin/clock"),
      set: async (epochMs) => (when("set", "epochMs", epochMs), post({ set: epochMs })),
      freezeAt: async (epochMs) => (when("freezeAt", "epochMs", epochMs), post({ set: epochMs, freeze: true })),
      freeze: async () => post({ freeze: true }),
      unfreeze: async () => post({ freeze: false }),
      advance: async (ms) => (when("advance", "ms", ms), post({ advance: ms })),
      reset: async () => post({ reset: true }),
    };
  }

  /** @param {string} namespace */
  in(namespace) {
    check(isName(namespace), "control.in", "namespace", "a non-empty string", namespace);
    return new Control(this.baseURL, { namespace, adminKey: this.adminKey, timeoutMs: this.timeoutMs, [shared]: this[shared] });
  }

  /**
   * Sends one control request and returns the decoded 2xx answer; throws ControlError otherwise, and an
   * Error named "TimeoutError" when no whole answer came within timeoutMs (a stopped or wedged emulator
   * would otherwise hold the call for undici's 300 s). Once the server is closed it sends nothing and
   * throws EmulatorError saying so (fetch's own error, "fetch failed", named no cause).
   * @param {string} method
   * @param {string} path starting with /__admin
   * @param {unknown} [body] JSON-encoded when given
   */
  async request(method, path, body) {
    check(isName(method), "control.request", "method", "an HTTP method", method);
    check(typeof path === "string" && path.startsWith("/"), "control.request", "path", 'a string starting with "/", such as "/__admin/clock"', path);
    if (this[shared].closed) throw new EmulatorError(`control: ${method} ${path}: ${this[shared].closed}`);
    const headers = {};
    if (body !== undefined) headers["content-type"] = "application/json";
    if (this.namespace) headers["x-mockingbird-namespace"] = this.namespace;
    if (this.adminKey) headers["x-mockingbird-admin-key"] = this.adminKey;
    let res, text;
    try {
      res = await fetch(this.baseURL + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: this.timeoutMs > 0 ? AbortSignal.timeout(this.timeoutMs) : undefined,
      });
      text = await res.text();
    } catch (err) {
      if (err?.name !== "TimeoutError") throw err;
      const timeout = new Error(`control: ${method} ${path}: no answer within ${this.timeoutMs} ms`, { cause: err });
      timeout.name = "TimeoutError";
      throw timeout;
    }
    if (!res.ok) throw new ControlError(method, path, res.status, text);
    const type = res.headers.get("content-type") ?? "";
    return type.startsWith("application/json") ? JSON.parse(text) : text;
  }

  /** @param {string} method @param {string} runId @param {string} tail */
  #run(method, runId, tail) {
    check(isName(runId), `control.${method}`, "runId", "a run id such as \"run_…\"", runId);
    return `/__admin/hermes/runs/${encodeURIComponent(runId)}${tail}`;
  }

  /** Scripts what the executor reports for a run (controls §11.1); returns the new record. */
  async observe(runId, observation) {
    const path = this.#run("observe", runId, "/observe");
    check(isObject(observation), "control.observe", "observation", 'an object such as { status: "running" }', observation);
    return this.request("POST", path, observation);
  }

  /** Emits non-status events on a run, in order (controls §11.2). */
  async events(runId, ...events) {
    return this.request("POST", this.#run("events", runId, "/events"), { events });
  }

  /** Consumes the queued steer texts of a run (controls §11.3); returns how many were removed. */
  async deliver(runId) {
    return (await this.request("POST", this.#run("deliver", runId, "/steer/deliver"), {})).delivered;
  }

  /** Models a gateway restart of the namespace (controls §11.5): owner "stale" or "alive". */
  restart(owner) {
    return this.request("POST", "/__admin/hermes/restart", { owner });
  }

  /** Sets the namespace's profile and identity (controls §11.6). */
  async scope(profile, identity) {
    await this.request("POST", "/__admin/hermes/scope", { profile, identity });
  }

  /** Runs one retention sweep now (controls §11.7); returns the number of cached runs removed. */
  async sweep() {
    return (await this.request("POST", "/__admin/hermes/sweep", {})).cacheRemoved;
  }

  /** Sets or clears the namespace's drain flag (controls §11.4). */
  async drain(draining) {
    await this.request("POST", "/__admin/hermes/drain", { draining });
  }

  /** Reports the namespace's drain flag. */
  async draining() {
    return (await this.request("GET", "/__admin/hermes/drain")).draining;
  }

  /** The namespace's runs, newest first: { runs, next } (query: status, limit, cursor). */
  async runs(query = {}) {
    checkNames("control.runs", query, ["status", "limit", "cursor"]);
    return this.request("GET", `/__admin/hermes/runs${queryString(query)}`);
  }

  /** One run's full view: record, owner, reservation keys, pending approvals, queued steers, transport. */
  async run(runId) {
    return this.request("GET", this.#run("run", runId, ""));
  }

  /**
   * Replaces the namespace's scenario set (docs/scenarios.md) with a scenario file's JSON form,
   * { scenarios: [...] }; returns the number of scenarios. An invalid set throws ControlError (400, the
   * message names the first bad field by path) and changes nothing. Runs already admitted keep theirs.
   */
  async putScenarios(set) {
    return (await this.request("PUT", "/__admin/hermes/scenarios", set)).scenarios;
  }

  /** The namespace's scenario set: its own, else the server's --scenarios default, else { scenarios: [] }. */
  scenarios() {
    return this.request("GET", "/__admin/hermes/scenarios");
  }

  /** Leaves the namespace without scenarios (not even the --scenarios default) until the next putScenarios. */
  async deleteScenarios() {
    await this.request("DELETE", "/__admin/hermes/scenarios");
  }

  /** Clears the namespace's state (every namespace's with { all: true }); returns the names reset. */
  async reset(options = {}) {
    checkNames("control.reset", options, ["all"]);
    const { all = false } = options;
    check(isAll(all), "control.reset", "all", "a boolean", all);
    return (await this.request("POST", `/__admin/reset${all ? "?all=1" : ""}`)).reset;
  }

  /** The created namespaces (controls §4.2). */
  async namespaces() {
    return (await this.request("GET", "/__admin/namespaces")).namespaces;
  }

  /** Adds (or replaces, by id) a fault rule in this namespace (controls §6.2); returns the stored answer. */
  addFault(rule) {
    return this.request("POST", "/__admin/faults", rule);
  }

  /**
   * Adds the rules of a named preset (controls §6.4) with optional overrides; returns the stored rules.
   * No overrides (undefined or null) sends {}, as Go's ApplyPreset(nil) does: the route refuses null.
   */
  async applyPreset(name, overrides) {
    check(isName(name), "control.applyPreset", "name", 'a preset name such as "hermes_poll_timeout"', name);
    return (await this.request("POST", `/__admin/faults/presets/${encodeURIComponent(name)}`, overrides ?? {})).rules;
  }

  /** Every fault rule of every namespace, with counters (controls §6.3). */
  async faults() {
    return (await this.request("GET", "/__admin/faults")).faults;
  }

  /** Removes the rule with that id, or every rule without one. */
  async deleteFaults(id) {
    check(id === undefined || isName(id), "control.deleteFaults", "id", "a rule id (or nothing, for every rule)", id);
    await this.request("DELETE", `/__admin/faults${id === undefined ? "" : `?id=${encodeURIComponent(id)}`}`);
  }

  /**
   * One page of this namespace's journal (controls §7): { size, requests, next }; every namespace's with
   * { all: true } (or all: 1, the route's all=1), as clearRequests and reset take it.
   */
  async requests(options = {}) {
    checkNames("control.requests", options, ["since", "status", "limit", "operationId", "cursor", "all"]);
    const { all, ...query } = options;
    check(isAll(all) || all === 1, "control.requests", "all", "a boolean", all);
    return this.request("GET", `/__admin/requests${queryString({ ...query, all: all ? 1 : undefined })}`);
  }

  /** How many journal entries match filter (method, operationId, pathPrefix, status, namespace). */
  async count(filter = {}) {
    return (await this.request("POST", "/__admin/requests/count", filter)).count;
  }

  /** Clears this namespace's journal (every namespace's with { all: true }). */
  async clearRequests(options = {}) {
    checkNames("control.clearRequests", options, ["all"]);
    const { all = false } = options;
    check(isAll(all), "control.clearRequests", "all", "a boolean", all);
    await this.request("DELETE", `/__admin/requests${all ? "?all=1" : ""}`);
  }

  /** The metrics as JSON (controls §9). */
  metrics() {
    return this.request("GET", "/__admin/metrics");
  }

  /** The namespace's timeline: checkpoints and branches (controls §8). */
  timeline() {
    return this.request("GET", "/__admin/timeline");
  }

  /** Commits a checkpoint of the namespace's state on a branch (default main; controls §8.3). */
  async checkpoint(branch) {
    check(branch === undefined || isName(branch), "control.checkpoint", "branch", "a branch name (or nothing, for main)", branch);
    return this.request("POST", "/__admin/checkpoints", branch === undefined ? {} : { branch });
  }

  /** Moves a branch head to a checkpoint and restores its state and the clock (controls §8.5). */
  async checkout(branch, checkpoint) {
    check(isName(branch), "control.checkout", "branch", "a branch name", branch);
    check(isName(checkpoint), "control.checkout", "checkpoint", 'a checkpoint id such as "cp_…"', checkpoint);
    return this.request("POST", `/__admin/branches/${encodeURIComponent(branch)}/checkout`, { checkpoint });
  }
}

/** "?k=v&…" for the defined entries of query, "" when none. */
function queryString(query) {
  const q = new URLSearchParams(
    Object.entries(query)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, String(v)]),
  ).toString();
  return q ? `?${q}` : "";
}
