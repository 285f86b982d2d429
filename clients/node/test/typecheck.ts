// Compiled by `npm run typecheck` (tsc, no emit): the seed README's example written in TypeScript must
// type-check against index.d.ts and the generated types. Not run by node --test.
import { createServer, findBinary, ControlError, type Run, type RunCreateAccepted, type ScenarioFile } from "hermes-emulator";

findBinary(process.env) satisfies string; // Node's ProcessEnv is an Environment

export async function scriptARun(): Promise<Run> {
  const server = await createServer({ seed: 42, timeoutMs: 60_000 });
  try {
    const res = await fetch(`${server.url}/v1/runs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ input: "Summarise the report" }),
    });
    const accepted = (await res.json()) as RunCreateAccepted;
    await server.control.observe(accepted.run_id, { status: "running" });
    const done: Run = await server.control.observe(accepted.run_id, { status: "completed", output: "Done." });
    const clock = await server.control.clock.advance(1500);
    clock.now satisfies number;
    const page = await server.control.runs({ status: "completed" });
    page.runs.map((r) => r.run_id) satisfies string[];
    (await server.control.run(accepted.run_id)).keyed satisfies boolean;
    (await server.control.count({ operationId: "RunCreate" })) satisfies number;
    const set: ScenarioFile = { scenarios: [{ name: "quick", steps: [{ after: "100ms", observe: { status: "completed" } }] }] };
    (await server.control.putScenarios(set)) satisfies number;
    (await server.control.scenarios()).scenarios.map((s) => s.name) satisfies string[];
    (await server.control.run(accepted.run_id)).scenario?.due satisfies number | null | undefined;
    await server.control.deleteScenarios();
    const notFound = '{"error":{"message":"Run not found: x","type":"invalid_request_error","param":null,"code":"run_not_found"}}';
    new ControlError("GET", "/__admin/hermes/runs/x", 404, notFound).code satisfies string | null;
    return done;
  } finally {
    await server.close();
  }
}
