// Scenarios (docs/scenarios.md): runs that move by themselves, loaded by createServer({ scenarios }) or
// through control.putScenarios, fired deterministically by advancing a frozen clock through control.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer, ControlError, EmulatorError } from "hermes-emulator";

const happyPath = join(import.meta.dirname, "..", "..", "..", "examples", "scenarios", "happy-path.yaml");
const t0 = 1700000000000;

const submit = async (url, body) => {
  const res = await fetch(`${url}/v1/runs`, { method: "POST", body: JSON.stringify(body) });
  assert.equal(res.status, 202);
  return (await res.json()).run_id;
};
const record = async (url, runId) => (await fetch(`${url}/v1/runs/${runId}`)).json();

test("createServer({ scenarios }) loads the file: a run completes when the frozen clock advances", async (t) => {
  const server = await createServer({ scenarios: happyPath });
  t.after(() => server.close());
  const { control } = server;
  assert.deepEqual((await control.scenarios()).scenarios.map((s) => s.name), ["happy-path"]);

  await control.clock.freezeAt(t0);
  const runId = await submit(server.url, { input: "list my files" });
  assert.deepEqual((await control.run(runId)).scenario, { name: "happy-path", step: "steps[0]", due: t0 + 100 });

  await control.clock.advance(1000); // steps 0–3 fire (due at 100, 150, 900, 1100 ms): the last is not due yet
  assert.equal((await record(server.url, runId)).status, "running");
  assert.deepEqual((await control.run(runId)).scenario, { name: "happy-path", step: "steps[3]", due: t0 + 1100 });

  await control.clock.advance(1000);
  const run = await record(server.url, runId);
  assert.equal(run.status, "completed");
  assert.equal(run.output, "Your project has 12 files.");
  assert.equal(run.updated_at, (t0 + 1200) / 1000, "the step fired at its own due time");
  assert.equal((await control.run(runId)).scenario, null);
});

test("putScenarios, scenarios and deleteScenarios act in the control's namespace", async (t) => {
  const server = await createServer();
  t.after(() => server.close());
  const control = server.control.in("auto");
  const url = `${server.url}/ns/auto`;
  const set = {
    scenarios: [
      {
        name: "quick",
        steps: [
          { after: "100ms", observe: { status: "running" } },
          { after: 400, observe: { status: "completed", output: "hi" } },
        ],
      },
    ],
  };
  assert.equal(await control.putScenarios(set), 1);
  assert.deepEqual(await control.scenarios(), set);
  assert.deepEqual(await server.control.scenarios(), { scenarios: [] }, "the default namespace has none");

  await control.clock.freezeAt(t0);
  const runId = await submit(url, { input: "hello" });
  await control.clock.advance(500);
  const run = await record(url, runId);
  assert.equal(run.status, "completed");
  assert.equal(run.output, "hi");
  assert.equal(run.updated_at, (t0 + 500) / 1000);

  await control.deleteScenarios();
  assert.deepEqual(await control.scenarios(), { scenarios: [] });
  const idle = await submit(url, { input: "hello" });
  await control.clock.advance(5000);
  assert.equal((await record(url, idle)).status, "queued", "no scenario drives a run admitted after the delete");
});

test("an invalid set is refused with the path of the bad field, and changes nothing", async (t) => {
  const server = await createServer();
  t.after(() => server.close());
  const good = { scenarios: [{ name: "a", steps: [{ after: 0, observe: { status: "running" } }] }] };
  await server.control.putScenarios(good);
  const bad = { scenarios: [{ name: "x", steps: [{ after: "1s", observe: { status: "running", output: "no" } }] }] };
  await assert.rejects(server.control.putScenarios(bad), (err) => {
    assert.ok(err instanceof ControlError);
    assert.equal(err.status, 400);
    assert.equal(err.type, "invalid_request_error");
    assert.equal(
      err.message,
      "control: PUT /__admin/hermes/scenarios: 400 scenarios[0].steps[0].observe: result fields require completed status",
    );
    return true;
  });
  assert.deepEqual(await server.control.scenarios(), good);
});

test("an invalid scenario file: createServer rejects with the file and the first bad field", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "hermes-scen-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, "bad.yaml");
  writeFileSync(file, "scenarios:\n  - name: x\n    steps:\n      - after: 1s\n        observe: {status: running, output: no}\n");
  await assert.rejects(createServer({ scenarios: file }), (err) => {
    assert.ok(err instanceof EmulatorError);
    assert.equal(
      err.message,
      `hermes-emulator exited (code 2) before listening: hermes-emulator serve: ${file}: scenarios[0].steps[0].observe: result fields require completed status`,
    );
    return true;
  });
});
