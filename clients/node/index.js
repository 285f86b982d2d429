// hermes-emulator for Node: start the Go binary as a child process and talk to it.
//
//   import { createServer } from "hermes-emulator";
//   const server = await createServer({ seed: 42 });
//   const res = await fetch(`${server.url}/v1/runs`, { method: "POST", body: JSON.stringify({ input: "hi" }) });
//   await server.control.observe(runId, { status: "completed", output: "done" });
//   await server.close();
//
// Plain ESM with JSDoc; the types are in index.d.ts (no build step, Node 20+).
import { spawn } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, join } from "node:path";
import { check, checkMs, Control, ControlError, EmulatorError, markClosed } from "./control.js";

export { Control, ControlError, EmulatorError };

const exe = process.platform === "win32" ? "hermes-emulator.exe" : "hermes-emulator";

/** How to get a binary, for the error when none is found. */
const howToGet =
  "download a release binary (dist/ of the repository: `make dist`), or `go install " +
  "github.com/hermes-emulator/hermes-emulator/cmd/hermes-emulator@latest`, then put it on PATH or set " +
  "HERMES_EMULATOR_BIN to its path";

/**
 * Finds the hermes-emulator binary: HERMES_EMULATOR_BIN, else the first executable `hermes-emulator`
 * on PATH. Throws EmulatorError saying how to get one.
 * @param {import("./index.js").Environment} [env]
 * @returns {string}
 */
export function findBinary(env = process.env) {
  const explicit = env.HERMES_EMULATOR_BIN;
  if (explicit) {
    if (!isExecutable(explicit)) {
      throw new EmulatorError(`HERMES_EMULATOR_BIN=${explicit} is not an executable file; ${howToGet}`);
    }
    return explicit;
  }
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir && isExecutable(join(dir, exe))) return join(dir, exe);
  }
  throw new EmulatorError(`no ${exe} binary: HERMES_EMULATOR_BIN is not set and PATH has none; ${howToGet}`);
}

/** @param {string} file */
function isExecutable(file) {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, process.platform === "win32" ? constants.F_OK : constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The serve flags for options; see index.d.ts (ServerOptions) for each option.
 * @param {import("./index.js").ServerOptions} o
 */
export function serveArgs(o) {
  const args = ["serve", "--host", o.host ?? "127.0.0.1", "--port", String(o.port ?? 0), "--log", o.log ?? "off"];
  if (o.seed !== undefined) args.push("--seed", String(o.seed));
  if (o.adminKey) args.push("--admin-key", o.adminKey);
  if (o.db) args.push("--db", o.db);
  if (o.scenarios) args.push("--scenarios", o.scenarios);
  if (o.apiKey) args.push("--api-key", o.apiKey);
  return [...args, ...(o.args ?? [])];
}

/**
 * The admin key the binary will require when started with serveArgs(o) in env: the last --admin-key
 * among the flags (options.adminKey, then args), else HERMES_EMULATOR_ADMIN_KEY (when set, even empty),
 * else MOCKINGBIRD_ADMIN_KEY — the binary's own order — so that `control` can send it.
 * @param {import("./index.js").ServerOptions} o
 * @param {import("./index.js").Environment} env
 * @returns {string | undefined}
 */
function adminKeyOf(o, env) {
  let key = env.HERMES_EMULATOR_ADMIN_KEY ?? env.MOCKINGBIRD_ADMIN_KEY;
  const args = serveArgs(o);
  for (let i = 1; i < args.length; i++) {
    if (args[i] === "--") break;
    const m = /^--?admin-key(?:=([\s\S]*))?$/.exec(args[i]);
    if (m) key = m[1] ?? args[++i];
  }
  return key || undefined;
}

// Children still running when this process exits are killed (close() removes its own): on a normal
// exit, and on SIGINT, SIGTERM or SIGHUP, which would otherwise end this process without an "exit"
// event. The signal handlers exist only while a child runs; when nothing else handles the signal, it
// is raised again so that this process ends as it would have.
const running = new Set();
const signals = ["SIGINT", "SIGTERM", "SIGHUP"];
process.on("exit", killRunning);

function killRunning() {
  for (const child of running) child.kill("SIGKILL");
  running.clear();
  untrack();
}

function onSignal(signal) {
  killRunning();
  if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
}

function track(child) {
  if (running.size === 0) for (const s of signals) process.on(s, onSignal);
  running.add(child);
}

function untrack(child) {
  if (child) running.delete(child);
  if (running.size === 0) for (const s of signals) process.off(s, onSignal);
}

const isString = (value) => typeof value === "string";

/**
 * What each option of createServer takes (index.d.ts, ServerOptions). undefined is as absent. The binary
 * checks the values of its flags (port, log) with clear messages of its own; these catch what JavaScript
 * would turn silently into a flag ("[object Object]", one character per argument) or ignore (a misspelt
 * name), and timeouts that setTimeout cannot take.
 */
const serverOptions = {
  seed: [(v) => isString(v) || Number.isFinite(v), "a number or a string"],
  port: [(v) => isString(v) || Number.isInteger(v), "a port number"],
  host: [isString, "a string"],
  adminKey: [isString, "a string"],
  db: [isString, "a string (a file path)"],
  scenarios: [isString, "a string (a file path)"],
  apiKey: [isString, "a string"],
  log: [isString, '"off", "pretty" or "json"'],
  args: [(v) => Array.isArray(v) && v.every(isString), "an array of strings"],
  bin: [isString, "a string (a file path)"],
  startTimeoutMs: [(v) => (checkMs("createServer", "startTimeoutMs", v, 1), true)],
  timeoutMs: [(v) => (checkMs("createServer", "timeoutMs", v, 0), true)],
};

/** Throws TypeError (RangeError for a timeout out of range) for options createServer cannot take. */
function checkOptions(options) {
  check(options !== null && typeof options === "object" && !Array.isArray(options), "createServer", "options", "an object such as { seed: 42 }", options);
  for (const [name, value] of Object.entries(options)) {
    if (!Object.hasOwn(serverOptions, name)) {
      throw new TypeError(`createServer: unknown option ${JSON.stringify(name)}; the options are ${Object.keys(serverOptions).join(", ")}`);
    }
    const [ok, what] = serverOptions[name];
    if (value !== undefined) check(ok(value), "createServer", name, what, value);
  }
}

/**
 * Starts `hermes-emulator serve` on a loopback port (any free one by default) and resolves once it
 * listens. The banner line `… listening on http://host:port` gives the URL.
 * @param {import("./index.js").ServerOptions} [options]
 * @returns {Promise<import("./index.js").Server>}
 */
export async function createServer(options = {}) {
  checkOptions(options);
  const bin = options.bin ?? findBinary();
  const child = spawn(bin, serveArgs(options), { stdio: ["ignore", "pipe", "pipe"], windowsHide: true });
  track(child);
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk) => {
    if (options.log && options.log !== "off") process.stderr.write(chunk);
    stderr = (stderr + chunk).slice(-4096);
  });
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  const stderrClosed = new Promise((resolve) => child.stderr.once("close", resolve));

  let url;
  try {
    url = await listening(child, exited, stderrClosed, () => stderr, options.startTimeoutMs ?? 10_000);
  } catch (err) {
    child.kill("SIGKILL");
    // A process the binary started may still hold its pipes: they must not keep this process alive.
    child.stdout.destroy();
    child.stderr.destroy();
    untrack(child);
    throw err;
  }
  // A forgotten close() must not keep the test process alive: the exit hook still kills the child.
  child.unref();
  child.stdout.unref?.();
  child.stderr.unref?.();

  const { hostname, port } = new URL(url);
  const host = hostname.replace(/^\[(.*)\]$/, "$1"); // an IPv6 literal without the URL's brackets: "::1"
  const control = new Control(url, { adminKey: adminKeyOf(options, process.env), timeoutMs: options.timeoutMs });
  // A binary that ends by itself (a crash, a kill) leaves calls failing with fetch's bare "fetch failed"
  // and its reason unseen (log "off" keeps stderr here): they fail with that reason instead. After
  // close(), the close's reason stays.
  exited.then(async ({ code, signal }) => {
    await within(stderrClosed, 1000);
    markClosed(control, `hermes-emulator exited (${signal ?? `code ${code}`}) while in use; stderr: ${stderr.trim()}`);
  });
  let closing;
  return {
    url,
    host,
    port: Number(port),
    control,
    pid: child.pid,
    close() {
      markClosed(control, "the emulator is closed (server.close() was called)");
      closing ??= stop(child, exited);
      return closing;
    },
  };
}

/**
 * Resolves with the base URL from the banner, or rejects when the child exits or is too slow: within
 * timeoutMs in all.
 */
function listening(child, exited, stderrClosed, stderr, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => {
      reject(new EmulatorError(`hermes-emulator did not report its address within ${timeoutMs} ms; stderr: ${stderr().trim()}`));
    }, timeoutMs);
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk) => {
      if (out === null) return; // listening: later output is read and dropped, so the pipe never fills
      out += chunk;
      // The URL ends at white space, a slash or a quote: with log "json" the banner is a JSON line.
      const m = /listening on (https?:\/\/[^\s/"]+)/.exec(out);
      if (m) {
        out = null;
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.once("error", (err) => {
      clearTimeout(timer);
      reject(new EmulatorError(`cannot start ${child.spawnfile}: ${err.message}`));
    });
    exited.then(async ({ code, signal }) => {
      if (out === null) return; // it listened: close() or a later exit, not a failed start
      clearTimeout(timer);
      // The reason is on stderr, whose last chunks may still be unread when "exit" comes: read it to its
      // end, within what is left of timeoutMs (a process the binary started may hold it open).
      await within(stderrClosed, deadline - Date.now());
      reject(new EmulatorError(`hermes-emulator exited (${signal ?? `code ${code}`}) before listening: ${stderr().trim()}`));
    });
  });
}

/** Resolves when promise does, or after ms, whichever comes first. */
async function within(promise, ms) {
  let timer;
  try {
    await Promise.race([promise, new Promise((resolve) => (timer = setTimeout(resolve, Math.max(0, ms))))]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * SIGTERM (graceful: in-flight requests finish, the database closes), SIGKILL after 5 s. The child was
 * unref'd once listening; it is ref'd again while close() waits, else a process with nothing else to do
 * would end once the SIGKILL timer fired, before the "exit" event, and close() would never resolve.
 */
async function stop(child, exited) {
  if (child.exitCode === null && child.signalCode === null) {
    child.ref();
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
    await exited;
    clearTimeout(timer);
  }
  untrack(child);
}
