// The lost-response + keyed-retry consumer scenario: the emulator admits a run and then loses the 202
// (preset hermes_submit_accepted_drop, controls §6.4); a client that retries with the same
// Idempotency-Key and body gets a replay of that same run instead of a second one.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "hermes-emulator";

/** A consumer's submit: POST /v1/runs with a key, retried on a lost response (up to 3 attempts). */
async function submitWithRetry(url, key, body) {
  let lastError;
  for (let attempt = 1; attempt <= 3; attempt++) {
    try {
      const res = await fetch(`${url}/v1/runs`, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": key },
        body: JSON.stringify(body),
      });
      return { attempt, status: res.status, replayed: res.headers.get("idempotency-replayed"), body: await res.json() };
    } catch (err) {
      lastError = err; // the connection closed without a response
    }
  }
  throw lastError;
}

test("a lost RunCreate response is recovered by a keyed retry: same run, no duplicate", async (t) => {
  const server = await createServer({ seed: 42 });
  t.after(() => server.close());
  const control = server.control.in("consumer");
  const url = `${server.url}/ns/consumer`;

  const [rule] = await control.applyPreset("hermes_submit_accepted_drop");
  assert.equal(rule.id, "hermes_submit_accepted_drop");

  const got = await submitWithRetry(url, "order-1234", { input: "Book the flight" });
  assert.equal(got.attempt, 2, "the first response was lost");
  assert.equal(got.status, 202);
  assert.equal(got.replayed, "true");
  assert.equal(got.body.replayed, true);
  assert.equal(got.body.status, "queued");

  // The journal shows the dropped admission (status 0) of the same run, then the replay.
  const { requests } = await control.requests({ operationId: "RunCreate" });
  assert.deepEqual(
    requests.map((r) => [r.status, r.ids?.runId, r.faultId ?? null]),
    [
      [0, got.body.run_id, "hermes_submit_accepted_drop"],
      [202, got.body.run_id, null],
    ],
  );

  // One run exists, and the consumer can drive it to the end.
  await control.observe(got.body.run_id, { status: "completed", output: "Booked." });
  const run = await (await fetch(`${url}/v1/runs/${got.body.run_id}`)).json();
  assert.equal(run.status, "completed");

  // A different key is a different run.
  const other = await submitWithRetry(url, "order-5678", { input: "Book the flight" });
  assert.equal(other.attempt, 1);
  assert.notEqual(other.body.run_id, got.body.run_id);
});
