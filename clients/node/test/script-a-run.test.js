// The seed README's "Script a run" example, unchanged except for the import line: start an emulator,
// submit a run with fetch, script its lifecycle through the control plane, read the record back.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "hermes-emulator";

test("Script a run", async () => {
  const server = await createServer({ seed: 42 });
  try {
    const res = await fetch(`${server.url}/v1/runs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ input: "Summarise the quarterly report" }),
    });
    assert.equal(res.status, 202);
    const { run_id, status } = await res.json();
    assert.equal(status, "started");

    await server.control.observe(run_id, { status: "running" });
    await server.control.observe(run_id, { status: "completed", output: "Revenue grew 12%." });

    const run = await (await fetch(`${server.url}/v1/runs/${run_id}`)).json();
    assert.equal(run.status, "completed");
    assert.equal(run.output, "Revenue grew 12%.");
    assert.equal(run.last_event, "run.completed");
  } finally {
    await server.close();
  }
});
