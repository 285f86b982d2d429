// createServer's process handling and the control client's errors, against the real binary.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer as createNetServer } from "node:net";
import { createServer, findBinary, serveArgs, Control, ControlError, EmulatorError } from "hermes-emulator";

const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

test("findBinary: HERMES_EMULATOR_BIN, else PATH, else an error saying how to get one", (t) => {
  const dir = mkdtempSync(join(tmpdir(), "hermes-bin-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const fake = join(dir, "hermes-emulator");
  writeFileSync(fake, "#!/bin/sh\n");
  chmodSync(fake, 0o755);
  assert.equal(findBinary({ HERMES_EMULATOR_BIN: fake, PATH: "" }), fake);
  assert.equal(findBinary({ PATH: `/nonexistent:${dir}` }), fake);
  assert.throws(() => findBinary({ PATH: "/nonexistent" }), {
    name: "EmulatorError",
    message: /^no hermes-emulator binary: HERMES_EMULATOR_BIN is not set and PATH has none; .*make dist.*go install .*HERMES_EMULATOR_BIN/,
  });
  assert.throws(() => findBinary({ HERMES_EMULATOR_BIN: join(dir, "missing") }), {
    message: new RegExp(`^HERMES_EMULATOR_BIN=${join(dir, "missing")} is not an executable file; `),
  });
});

test("serveArgs maps every option to its flag", () => {
  assert.deepEqual(serveArgs({}), ["serve", "--host", "127.0.0.1", "--port", "0", "--log", "off"]);
  assert.deepEqual(
    serveArgs({ seed: 42, port: 9000, host: "::1", adminKey: "k", db: "/tmp/x.db", scenarios: "s.json", apiKey: "a", log: "json", args: ["--journal-size", "5"] }),
    ["serve", "--host", "::1", "--port", "9000", "--log", "json", "--seed", "42", "--admin-key", "k", "--db", "/tmp/x.db", "--scenarios", "s.json", "--api-key", "a", "--journal-size", "5"],
  );
});

test("an ephemeral loopback port, served until close()", async () => {
  const server = await createServer();
  assert.equal(server.host, "127.0.0.1");
  assert.ok(server.port > 0);
  assert.equal(server.url, `http://127.0.0.1:${server.port}`);
  const health = await (await fetch(`${server.url}/health`)).json();
  assert.equal(health.status, "ok");
  await server.close();
  await server.close(); // idempotent
  assert.equal(alive(server.pid), false);
  await assert.rejects(fetch(`${server.url}/health`), TypeError);
});

test("host: \"::1\": host is the address without the URL's brackets", async (t) => {
  let server;
  try {
    server = await createServer({ host: "::1" });
  } catch (err) {
    if (/cannot assign requested address|address family not supported/i.test(err.message)) return t.skip("no IPv6 loopback here");
    throw err;
  }
  try {
    assert.equal(server.host, "::1");
    assert.equal(server.url, `http://[::1]:${server.port}`);
    assert.equal((await fetch(`${server.url}/health`)).status, 200);
  } finally {
    await server.close();
  }
});

test("log: \"json\": the URL comes from the JSON banner line", async () => {
  const server = await createServer({ log: "json" });
  try {
    assert.equal(server.host, "127.0.0.1");
    assert.ok(server.port > 0);
    assert.equal(server.url, `http://127.0.0.1:${server.port}`);
    assert.equal((await server.control.clock.get()).frozen, false);
  } finally {
    await server.close();
  }
});

test("a binary that cannot start rejects with its stderr", async () => {
  await assert.rejects(createServer({ args: ["--no-such-flag"] }), {
    name: "EmulatorError",
    message: /^hermes-emulator exited \(code 2\) before listening: flag provided but not defined: -no-such-flag/,
  });
  await assert.rejects(createServer({ bin: "/nonexistent/hermes-emulator" }), (err) => err instanceof EmulatorError);
});

/** A fake binary: a shell script named hermes-emulator in a temporary directory removed after the test. */
function fakeBinary(t, script) {
  const dir = mkdtempSync(join(tmpdir(), "hermes-bin-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const bin = join(dir, "hermes-emulator");
  writeFileSync(bin, `#!/bin/sh\n${script}`);
  chmodSync(bin, 0o755);
  return bin;
}

test("a failed start waits for the whole stderr: the reason may come after the exit", async (t) => {
  // The "exit" event can come before stderr's last chunk was read (seen as an empty reason under load).
  // Here the reason is written after the exit, by a process the binary left behind.
  const bin = fakeBinary(t, "(exec >&-; sleep 0.5; echo 'the reason, late' >&2) &\nexit 3\n");
  await assert.rejects(createServer({ bin }), {
    name: "EmulatorError",
    message: "hermes-emulator exited (code 3) before listening: the reason, late",
  });
});

test("a failed start whose stderr stays open still rejects within startTimeoutMs", async (t) => {
  // A process the binary started holds stderr for 5 s: the wait for its end is bounded by the start's.
  const bin = fakeBinary(t, "echo 'the reason' >&2\n(exec >&-; sleep 5) &\nexit 3\n");
  const began = Date.now();
  await assert.rejects(createServer({ bin, startTimeoutMs: 1000 }), {
    name: "EmulatorError",
    message: "hermes-emulator exited (code 3) before listening: the reason",
  });
  assert.ok(Date.now() - began < 3000, `took ${Date.now() - began} ms`);
});

test("adminKey locks the control plane; control sends the key", async (t) => {
  const server = await createServer({ adminKey: "s3cret" });
  t.after(() => server.close());
  assert.equal((await fetch(`${server.url}/__admin/clock`)).status, 401);
  const clock = await server.control.clock.freezeAt(1700000000000);
  assert.deepEqual(clock, { now: 1700000000000, frozen: true, offsetMs: clock.offsetMs });
  assert.equal((await server.control.clock.advance(1500)).now, 1700000001500);
});

test("control sends the key the binary took from the environment or from args", async () => {
  const saved = { h: process.env.HERMES_EMULATOR_ADMIN_KEY, m: process.env.MOCKINGBIRD_ADMIN_KEY };
  const restore = (k, v) => (v === undefined ? delete process.env[k] : (process.env[k] = v));
  const locked = async (options, key) => {
    const server = await createServer(options);
    try {
      assert.equal((await fetch(`${server.url}/__admin/clock`)).status, 401);
      assert.equal((await fetch(`${server.url}/__admin/clock`, { headers: { "x-mockingbird-admin-key": key } })).status, 200);
      assert.equal(server.control.adminKey, key);
      assert.equal((await server.control.clock.get()).frozen, false);
    } finally {
      await server.close();
    }
  };
  try {
    delete process.env.HERMES_EMULATOR_ADMIN_KEY;
    process.env.MOCKINGBIRD_ADMIN_KEY = "m1";
    await locked({}, "m1");
    process.env.HERMES_EMULATOR_ADMIN_KEY = "h1"; // wins over MOCKINGBIRD_ADMIN_KEY, as in the binary
    await locked({}, "h1");
    await locked({ adminKey: "o1" }, "o1"); // the option is a flag: it wins over the environment
    delete process.env.HERMES_EMULATOR_ADMIN_KEY;
    delete process.env.MOCKINGBIRD_ADMIN_KEY;
    await locked({ args: ["--admin-key=a1"] }, "a1");
    await locked({ adminKey: "o1", args: ["-admin-key", "a2"] }, "a2"); // the last flag wins
  } finally {
    restore("HERMES_EMULATOR_ADMIN_KEY", saved.h);
    restore("MOCKINGBIRD_ADMIN_KEY", saved.m);
  }
});

test("control errors carry status, type, code and the envelope's message", async (t) => {
  const server = await createServer();
  t.after(() => server.close());
  await assert.rejects(server.control.observe("run_missing", { status: "completed" }), (err) => {
    assert.ok(err instanceof ControlError);
    assert.equal(err.status, 404);
    assert.equal(err.code, "run_not_found");
    assert.equal(err.type, "invalid_request_error");
    assert.equal(err.message, "control: POST /__admin/hermes/runs/run_missing/observe: 404 Run not found: run_missing (run_not_found)");
    return true;
  });
  await assert.rejects(server.control.addFault({ operationId: "RunGet" }), {
    status: 400,
    type: "mockingbird_admin",
    message: "control: POST /__admin/faults: 400 a fault needs a numeric status, a delayMs/latencyMs, drop: true, an effect, or a preset",
  });
});

test("namespaces are isolated: header or /ns/<name> prefix", async (t) => {
  const server = await createServer();
  t.after(() => server.close());
  const res = await fetch(`${server.url}/ns/a/v1/runs`, { method: "POST", body: JSON.stringify({ input: "x" }) });
  const { run_id } = await res.json();
  assert.equal((await fetch(`${server.url}/ns/a/v1/runs/${run_id}`)).status, 200);
  assert.equal((await fetch(`${server.url}/v1/runs/${run_id}`, { headers: { "x-mockingbird-namespace": "b" } })).status, 404);
  assert.equal((await server.control.in("a").observe(run_id, { status: "running" })).status, "running");
  await assert.rejects(server.control.in("b").observe(run_id, { status: "running" }), { status: 404 });
  assert.deepEqual(await server.control.in("a").reset(), ["a"]);
  assert.equal((await fetch(`${server.url}/ns/a/v1/runs/${run_id}`)).status, 404);
});

test("the binary stops when the Node process is ended by SIGTERM, which still ends it", () => {
  const script = `import { createServer } from "hermes-emulator";
    const s = await createServer(); console.log(s.pid); process.kill(process.pid, "SIGTERM");
    setTimeout(() => console.log("survived"), 5000);`;
  const res = spawnSync(process.execPath, ["--input-type=module", "-e", script], { cwd: import.meta.dirname, encoding: "utf8" });
  assert.equal(res.signal, "SIGTERM", res.stderr);
  const pid = Number(res.stdout.trim());
  assert.ok(pid > 0, res.stdout);
  const deadline = Date.now() + 2000;
  while (alive(pid) && Date.now() < deadline);
  assert.equal(alive(pid), false, `pid ${pid} still running`);
});

test("the binary stops when the Node process exits without close()", () => {
  const script = `import { createServer } from "hermes-emulator";
    const s = await createServer(); console.log(s.pid);`; // no close(): the exit hook kills the child
  const pid = Number(execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: import.meta.dirname, encoding: "utf8" }).trim());
  assert.ok(pid > 0);
  const deadline = Date.now() + 2000;
  while (alive(pid) && Date.now() < deadline);
  assert.equal(alive(pid), false, `pid ${pid} still running`);
});

test("runs listing, run view and request count", async (t) => {
  const server = await createServer();
  t.after(() => server.close());
  const control = server.control.in("views");
  const submit = (key) =>
    fetch(`${server.url}/ns/views/v1/runs`, { method: "POST", headers: { "idempotency-key": key }, body: JSON.stringify({ input: "x" }) }).then((r) => r.json());
  const a = await submit("a");
  const b = await submit("b");
  await control.observe(a.run_id, { status: "completed", output: "done" });
  const page = await control.runs();
  assert.deepEqual(new Set(page.runs.map((r) => r.run_id)), new Set([a.run_id, b.run_id]));
  assert.deepEqual((await control.runs({ status: "completed" })).runs.map((r) => r.run_id), [a.run_id]);
  const view = await control.run(b.run_id);
  assert.equal(view.status, "queued");
  assert.equal(view.keyed, true);
  assert.equal(await control.count({ operationId: "RunCreate", status: 202 }), 2);
  assert.equal(await control.count({ operationId: "RunGet" }), 0);
});

test("close() resolves when the binary ignores SIGTERM: SIGKILL after 5 s, and the process waits for it", () => {
  // A stopped process keeps SIGTERM pending; only the SIGKILL fallback ends it. Nothing else keeps this
  // process alive meanwhile, so close() must (it once never resolved: exit 13, unsettled top-level await).
  const script = `import { createServer } from "hermes-emulator";
    const s = await createServer(); process.kill(s.pid, "SIGSTOP"); console.log(s.pid);
    await s.close(); console.log("closed");`;
  const res = spawnSync(process.execPath, ["--input-type=module", "-e", script], { cwd: import.meta.dirname, encoding: "utf8", timeout: 20000 });
  const [pid, closed] = res.stdout.trim().split("\n");
  assert.equal(res.status, 0, res.stderr);
  assert.equal(closed, "closed");
  assert.equal(alive(Number(pid)), false, `pid ${pid} still running`);
});

test("applyPreset without overrides — none, undefined or null — sends {}, as the Go and Python clients do", async (t) => {
  const server = await createServer();
  t.after(() => server.close());
  const { control } = server;
  for (const overrides of [[], [undefined], [null]]) {
    const [rule] = await control.applyPreset("hermes_poll_timeout", ...overrides);
    assert.deepEqual(rule, { namespace: "default", operationId: "RunGet", count: 1, delayMs: 1000, preset: "hermes_poll_timeout", id: "hermes_poll_timeout" });
  }
  assert.equal((await control.applyPreset("hermes_poll_timeout", { count: 3 }))[0].count, 3);
  await assert.rejects(control.request("POST", "/__admin/faults/presets/hermes_poll_timeout", null), {
    status: 400,
    message: "control: POST /__admin/faults/presets/hermes_poll_timeout: 400 preset overrides must be an object",
  });
});

test("requests({ all: true }) pages every namespace's journal, as clearRequests({ all: true }) clears it", async (t) => {
  const server = await createServer();
  t.after(() => server.close());
  await fetch(`${server.url}/ns/j1/v1/runs/x`);
  await fetch(`${server.url}/ns/j2/v1/runs/y`);
  const paths = async (query) => (await server.control.in("j1").requests(query)).requests.map((e) => `${e.namespace} ${e.path}`);
  assert.deepEqual(await paths(), ["j1 /v1/runs/x"]);
  assert.deepEqual(await paths({ all: false }), ["j1 /v1/runs/x"]);
  assert.deepEqual(await paths({ all: true }), ["j1 /v1/runs/x", "j2 /v1/runs/y"]);
  assert.deepEqual(await paths({ all: 1, operationId: "RunGet", limit: 1 }), ["j2 /v1/runs/y"]);
  await server.control.clearRequests({ all: true });
  assert.deepEqual(await paths({ all: true }), []);
});

test("createServer({ timeoutMs }) is the control's timeoutMs, as HermesEmulator(timeout=) in Python", async (t) => {
  const server = await createServer({ timeoutMs: 500 });
  t.after(() => server.close());
  assert.equal(server.control.timeoutMs, 500);
  assert.equal(server.control.in("t1").timeoutMs, 500);
  const plain = await createServer();
  t.after(() => plain.close());
  assert.equal(plain.control.timeoutMs, 30000);
});

test("a control call to an emulator that does not answer rejects after timeoutMs (default 30 s), naming the call", async (t) => {
  const sockets = [];
  const silent = createNetServer((socket) => sockets.push(socket)); // accepts, reads, never answers
  await new Promise((resolve) => silent.listen(0, "127.0.0.1", resolve));
  t.after(() => {
    for (const socket of sockets) socket.destroy();
    silent.close();
  });
  const url = `http://127.0.0.1:${silent.address().port}`;
  assert.equal(new Control(url).timeoutMs, 30000);
  const control = new Control(url, { timeoutMs: 300 }).in("slow");
  assert.equal(control.timeoutMs, 300, "in() keeps it");
  let timer;
  const late = new Promise((resolve) => (timer = setTimeout(resolve, 5000, "still waiting after 5 s")));
  try {
    await Promise.race([
      assert.rejects(control.clock.get(), { name: "TimeoutError", message: "control: GET /__admin/clock: no answer within 300 ms" }),
      late.then((v) => assert.fail(v)),
    ]);
  } finally {
    clearTimeout(timer);
  }
});

test("after close(), every control call rejects at once with EmulatorError: the emulator is closed", async () => {
  // They failed with fetch's TypeError "fetch failed" (ECONNREFUSED as its cause), which named no reason.
  const server = await createServer();
  const before = server.control.in("t1");
  const closing = server.close(); // from the call on, not once the process has exited
  const calls = {
    observe: (c) => c.observe("run_x", { status: "running" }),
    events: (c) => c.events("run_x", { type: "message.delta", delta: "x" }),
    deliver: (c) => c.deliver("run_x"),
    restart: (c) => c.restart("stale"),
    scope: (c) => c.scope("p", "i"),
    sweep: (c) => c.sweep(),
    drain: (c) => c.drain(true),
    draining: (c) => c.draining(),
    runs: (c) => c.runs(),
    run: (c) => c.run("run_x"),
    putScenarios: (c) => c.putScenarios({ scenarios: [] }),
    scenarios: (c) => c.scenarios(),
    deleteScenarios: (c) => c.deleteScenarios(),
    reset: (c) => c.reset(),
    namespaces: (c) => c.namespaces(),
    addFault: (c) => c.addFault({ operationId: "RunGet", status: 503 }),
    applyPreset: (c) => c.applyPreset("hermes_poll_timeout"),
    faults: (c) => c.faults(),
    deleteFaults: (c) => c.deleteFaults(),
    requests: (c) => c.requests(),
    count: (c) => c.count(),
    clearRequests: (c) => c.clearRequests(),
    metrics: (c) => c.metrics(),
    timeline: (c) => c.timeline(),
    checkpoint: (c) => c.checkpoint(),
    checkout: (c) => c.checkout("main", "cp_x"),
    request: (c) => c.request("GET", "/__admin/clock"),
    ...Object.fromEntries(
      ["get", "set", "freezeAt", "freeze", "unfreeze", "advance", "reset"].map((m) => [`clock.${m}`, (c) => c.clock[m](1700000000000)]),
    ),
  };
  const methods = Object.getOwnPropertyNames(Control.prototype).filter((m) => m !== "constructor" && m !== "in");
  assert.deepEqual(methods.filter((m) => !(m in calls)), [], "every method of Control is called here");
  for (const control of [server.control, before, server.control.in("t2")]) {
    for (const [name, call] of Object.entries(calls)) {
      const began = Date.now();
      await assert.rejects(call(control), (err) => {
        assert.ok(err instanceof EmulatorError, `${name}: ${err}`);
        assert.match(err.message, /^control: (GET|POST|PUT|DELETE) \/__admin\/\S+: the emulator is closed \(server\.close\(\) was called\)$/, name);
        return true;
      });
      assert.ok(Date.now() - began < 100, `${name} took ${Date.now() - began} ms`);
    }
  }
  await closing;
  await assert.rejects(server.control.clock.get(), EmulatorError);
  // The address stays readable (what it was; nothing answers there now), and a Control built by hand
  // on it knows nothing of the server: fetch's own error.
  assert.equal(server.url, `http://127.0.0.1:${server.port}`);
  await assert.rejects(new Control(server.url).clock.get(), TypeError);
});

test("timeoutMs is the whole call's: an answer that trickles in (a byte every 0.1 s) still rejects after it", async (t) => {
  // As Python's timeout (test_timeout_is_the_whole_calls_not_each_waits): head, then body, dripped.
  for (const head of [true, false]) {
    const answer = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n";
    const [fast, slow] = head ? ["", answer] : [answer, " ".repeat(1000)];
    const sockets = [];
    const dripping = createNetServer((socket) => {
      sockets.push(socket);
      socket.once("data", async () => {
        socket.write(fast);
        for (const byte of slow.slice(0, 40)) {
          if (socket.destroyed) return;
          socket.write(byte);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        socket.end();
      });
      socket.on("error", () => {});
    });
    await new Promise((resolve) => dripping.listen(0, "127.0.0.1", resolve));
    t.after(() => {
      for (const socket of sockets) socket.destroy();
      dripping.close();
    });
    const control = new Control(`http://127.0.0.1:${dripping.address().port}`, { timeoutMs: 500 });
    const began = Date.now();
    await assert.rejects(control.clock.get(), { name: "TimeoutError", message: "control: GET /__admin/clock: no answer within 500 ms" });
    const took = Date.now() - began;
    assert.ok(took >= 450 && took < 1500, `${head ? "head" : "body"}: took ${took} ms`);
  }
});

test("a bad argument throws TypeError (RangeError for a timeout out of range) naming the call, before anything starts or is sent", async () => {
  // Each of these was a silent no-op or mistake (an unknown option ignored, seed "[object Object]", args
  // split into characters, in("") acting in the default namespace, reset(true) resetting one namespace,
  // clock.advance() changing nothing, a typo'd query answering the unfiltered page, timeoutMs 2 ** 31
  // firing at once), a misleading answer (observe() on the run "undefined", observe("") "no admin
  // route"), or an error from deep inside (fetch "Failed to parse URL", undefined.replace).
  const bad = [
    [() => createServer("42"), TypeError, 'createServer: options must be an object such as { seed: 42 }, not "42"'],
    [() => createServer({ timeout: 5 }), TypeError, /^createServer: unknown option "timeout"; the options are seed, port, host, adminKey, db, scenarios, apiKey, log, args, bin, startTimeoutMs, timeoutMs$/],
    [() => createServer({ seed: {} }), TypeError, "createServer: seed must be a number or a string, not an object"],
    [() => createServer({ args: "--seed 4" }), TypeError, 'createServer: args must be an array of strings, not "--seed 4"'],
    [() => createServer({ adminKey: 42 }), TypeError, "createServer: adminKey must be a string, not 42"],
    [() => createServer({ timeoutMs: "500" }), TypeError, 'createServer: timeoutMs must be a number of ms, not "500"'],
    [() => createServer({ timeoutMs: -1 }), RangeError, "createServer: timeoutMs must be a whole number of ms from 0 (no limit) to 2147483647, not -1"],
    [() => createServer({ timeoutMs: 2 ** 31 }), RangeError, /^createServer: timeoutMs must be .* not 2147483648$/],
    [() => createServer({ startTimeoutMs: 0 }), RangeError, "createServer: startTimeoutMs must be a whole number of ms from 1 to 2147483647, not 0"],
    [() => new Control(), TypeError, 'new Control: baseURL must be an http:// or https:// URL such as "http://127.0.0.1:8827", not undefined'],
    [() => new Control("127.0.0.1:8827"), TypeError, /^new Control: baseURL must be an http:\/\/ or https:\/\/ URL .*, not "127.0.0.1:8827"$/],
    [() => new Control("http://x", { namespace: "" }), TypeError, 'new Control: options.namespace must be a non-empty string, not ""'],
    [() => new Control("http://x", { timeoutMs: 1.5 }), RangeError, /^new Control: options.timeoutMs must be a whole number of ms .*, not 1.5$/],
  ];
  const control = new Control("http://127.0.0.1:9"); // nothing listens: a call that got through would fail otherwise
  bad.push(
    [() => control.in(""), TypeError, 'control.in: namespace must be a non-empty string, not ""'],
    [() => control.in(), TypeError, "control.in: namespace must be a non-empty string, not undefined"],
    [() => control.observe(), TypeError, 'control.observe: runId must be a run id such as "run_…", not undefined'],
    [() => control.observe("", { status: "running" }), TypeError, 'control.observe: runId must be a run id such as "run_…", not ""'],
    [() => control.observe("run_x"), TypeError, 'control.observe: observation must be an object such as { status: "running" }, not undefined'],
    [() => control.events(42), TypeError, 'control.events: runId must be a run id such as "run_…", not 42'],
    [() => control.deliver(), TypeError, /^control.deliver: runId must be/],
    [() => control.run(null), TypeError, /^control.run: runId must be .*, not null$/],
    [() => control.clock.advance(), TypeError, "control.clock.advance: ms must be a number or a string, not undefined"],
    [() => control.clock.set(NaN), TypeError, "control.clock.set: epochMs must be a number or a string, not NaN"],
    [() => control.clock.freezeAt(), TypeError, /^control.clock.freezeAt: epochMs must be/],
    [() => control.reset(true), TypeError, "control.reset: options must be an object (all), not true"],
    [() => control.reset({ all: "no" }), TypeError, 'control.reset: all must be a boolean, not "no"'],
    [() => control.clearRequests({ every: true }), TypeError, 'control.clearRequests: unknown option "every"; the options are all'],
    [() => control.runs({ statsu: "completed" }), TypeError, 'control.runs: unknown option "statsu"; the options are status, limit, cursor'],
    [() => control.requests({ operationID: "RunGet" }), TypeError, /^control.requests: unknown option "operationID"; the options are since, status, limit, operationId, cursor, all$/],
    [() => control.applyPreset(), TypeError, 'control.applyPreset: name must be a preset name such as "hermes_poll_timeout", not undefined'],
    [() => control.deleteFaults({ id: "x" }), TypeError, "control.deleteFaults: id must be a rule id (or nothing, for every rule), not an object"],
    [() => control.checkpoint(5), TypeError, "control.checkpoint: branch must be a branch name (or nothing, for main), not 5"],
    [() => control.checkout("main"), TypeError, 'control.checkout: checkpoint must be a checkpoint id such as "cp_…", not undefined'],
    [() => control.request("GET", "__admin/clock"), TypeError, 'control.request: path must be a string starting with "/", such as "/__admin/clock", not "__admin/clock"'],
  );
  for (const [call, type, message] of bad) {
    let result;
    try {
      result = call(); // constructors and in() throw; the calls reject
    } catch (err) {
      result = Promise.reject(err);
    }
    await assert.rejects(result, (err) => {
      assert.ok(err instanceof type, `${call}: ${err}`);
      if (typeof message === "string") assert.equal(err.message, message);
      else assert.match(err.message, message);
      return true;
    });
  }
});

test("a binary that ends by itself: control calls reject with EmulatorError giving its exit and its stderr", async (t) => {
  // They failed with fetch's TypeError "fetch failed", and the reason the binary printed (log "off"
  // keeps its stderr in this process) was seen nowhere.
  const bin = fakeBinary(t, "echo 'hermes-emulator listening on http://127.0.0.1:9'\nsleep 0.3\necho 'panic: boom' >&2\nexit 2\n");
  const server = await createServer({ bin });
  t.after(() => server.close());
  const deadline = Date.now() + 5000;
  let err;
  while (Date.now() < deadline) {
    err = await server.control.clock.get().catch((e) => e);
    if (err instanceof EmulatorError) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.ok(err instanceof EmulatorError, String(err));
  assert.equal(err.message, "control: GET /__admin/clock: hermes-emulator exited (code 2) while in use; stderr: panic: boom");
  await server.close();
  await assert.rejects(server.control.clock.get(), { message: /exited \(code 2\) while in use/ }); // the first reason stays
  const real = await createServer();
  process.kill(real.pid, "SIGKILL");
  await new Promise((resolve) => setTimeout(resolve, 500));
  await assert.rejects(real.control.clock.get(), { name: "EmulatorError", message: /^control: GET \/__admin\/clock: hermes-emulator exited \(SIGKILL\) while in use; stderr: $/ });
  await real.close();
});
