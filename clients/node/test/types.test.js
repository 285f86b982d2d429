// The declarations as a TypeScript user gets them: the package's published files (package.json "files")
// copied into a fresh project's node_modules, and a consumer compiled by tsc (strict, skipLibCheck off)
// with no @types package at all — no @types/node, no DOM lib. The declarations must stand alone:
// a reference to Node's types (NodeJS.ProcessEnv) failed with TS2503 for anyone without @types/node.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

const pkgDir = join(import.meta.dirname, "..");
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");

const consumer = `import {
  createServer, findBinary, serveArgs, Control, ControlError, EmulatorError,
  type Run, type RunView, type ScenarioFile, type ServerOptions,
} from "hermes-emulator";

const env: { [name: string]: string | undefined } = { HERMES_EMULATOR_BIN: "/opt/hermes-emulator" };
export const bin: string = findBinary(env);
export const args: string[] = serveArgs({ seed: 42, log: "json" });

export async function script(options: ServerOptions): Promise<Run> {
  const server = await createServer(options);
  try {
    const control: Control = server.control.in("t1");
    const set: ScenarioFile = { scenarios: [{ name: "quick", steps: [{ after: 0, observe: { status: "completed" } }] }] };
    (await control.putScenarios(set)) satisfies number;
    const view: RunView = await control.run("run_x");
    view.keyed satisfies boolean;
    (await control.clock.advance(1500)).now satisfies number;
    return await control.observe("run_x", { status: "completed", output: "done" });
  } catch (err) {
    if (err instanceof ControlError) err.code satisfies string | null;
    if (err instanceof EmulatorError) err.message satisfies string;
    throw err;
  } finally {
    await server.close();
  }
}
`;

/** A project in a new temporary directory: the package installed from its "files", consumer.ts, tsconfig. */
function project(t, compilerOptions) {
  const dir = mkdtempSync(join(tmpdir(), "hermes-ts-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const installed = join(dir, "node_modules", "hermes-emulator");
  mkdirSync(installed, { recursive: true });
  const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
  for (const file of ["package.json", ...pkg.files]) cpSync(join(pkgDir, file), join(installed, file), { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  writeFileSync(join(dir, "consumer.ts"), consumer);
  const options = { strict: true, noEmit: true, skipLibCheck: false, target: "es2022", lib: ["es2022"], ...compilerOptions };
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions: options, files: ["consumer.ts"] }));
  return dir;
}

for (const [name, compilerOptions] of [
  ["nodenext", { module: "nodenext", moduleResolution: "nodenext" }],
  ["bundler", { module: "esnext", moduleResolution: "bundler" }],
]) {
  test(`a TypeScript consumer compiles without @types/node (moduleResolution ${name})`, (t) => {
    const dir = project(t, compilerOptions);
    // No @types anywhere tsc would look (the project's node_modules and every parent's).
    for (let d = dir; ; d = join(d, "..")) {
      assert.equal(existsSync(join(d, "node_modules", "@types")), false, `${d}/node_modules/@types exists`);
      if (d === join(d, "..")) break;
    }
    const res = spawnSync(process.execPath, [tsc, "-p", dir], { encoding: "utf8" });
    assert.equal(res.status, 0, res.stdout + res.stderr);
  });
}
