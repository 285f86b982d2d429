// Types of hermes-emulator (index.js, control.js). The public API's types are generated from
// openapi.yaml, the control plane's from admin.yaml, by openapi-typescript into types/ (`npm run
// generate`; scripts/check fails when they drift).
import type { components, operations, paths } from "./types/openapi.js";
import type { components as AdminComponents, operations as AdminOperations, paths as AdminPaths } from "./types/admin.js";

export type { components, operations, paths, AdminComponents, AdminOperations, AdminPaths };

/** The run record (runs-api §4), as GET /v1/runs/{run_id} answers it. */
export type Run = components["schemas"]["Run"];
/** The 202 answer of POST /v1/runs. */
export type RunCreateAccepted = components["schemas"]["RunCreateAccepted"];
/** A body of POST /v1/runs. */
export type RunCreateRequest = components["schemas"]["RunCreateRequest"];
/** One of the eight run states. */
export type RunStatus = components["schemas"]["RunStatus"];

/**
 * Environment variables by name, as `process.env` holds them. A plain structural type, so that these
 * declarations compile without @types/node.
 */
export interface Environment {
  [name: string]: string | undefined;
}

/** Options of createServer; each maps to a flag of `hermes-emulator serve`. */
export interface ServerOptions {
  /** Fault-rate RNG seed (--seed): an integer or any string. */
  seed?: number | string;
  /** Listen port (--port); default 0, any free port. */
  port?: number;
  /** Listen address (--host); default 127.0.0.1. */
  host?: string;
  /**
   * Require x-mockingbird-admin-key on /__admin (--admin-key); `control` sends it, or the key the binary
   * takes from `args` or from HERMES_EMULATOR_ADMIN_KEY / MOCKINGBIRD_ADMIN_KEY when this is not set.
   */
  adminKey?: string;
  /** SQLite file, durable across restarts (--db); default a private in-memory database. */
  db?: string;
  /** Scenario file, the default set of every namespace (--scenarios). */
  scenarios?: string;
  /** Upstream bearer auth on the public API (--api-key). */
  apiKey?: string;
  /** Log format (--log): "off" (default), "pretty" or "json"; logs go to this process's stderr. */
  log?: "off" | "pretty" | "json";
  /** More flags, appended as given. */
  args?: string[];
  /** The binary; default HERMES_EMULATOR_BIN, else `hermes-emulator` on PATH. */
  bin?: string;
  /** How long the whole start may take (the binary's stderr read to its end on a failure included); default 10000 ms. */
  startTimeoutMs?: number;
  /** How long one call of `control` may take (Control's timeoutMs); default 30000, 0 = no limit. */
  timeoutMs?: number;
}

/** A running emulator: a child process, stopped by close() (and when this process exits). */
export interface Server {
  /** Base URL, e.g. "http://127.0.0.1:39781" (no trailing slash). */
  url: string;
  /** The address it listens on, e.g. "127.0.0.1" or "::1" (an IPv6 literal without the URL's brackets). */
  host: string;
  port: number;
  /** Process id of the binary. */
  pid: number | undefined;
  /** Control plane of the default namespace; `control.in("t1")` for another. */
  control: Control;
  /**
   * Stops the binary gracefully (SIGTERM, SIGKILL after 5 s); resolves once it exited. Idempotent. From
   * the call on, `control` (and every `control.in(…)`) rejects at once with EmulatorError; url, host, port
   * and pid keep naming what it was.
   */
  close(): Promise<void>;
}

/**
 * Starts `hermes-emulator serve` and resolves once it listens. An unknown option, or one of the wrong
 * kind, rejects with TypeError before anything starts (RangeError for a timeout out of range).
 */
export function createServer(options?: ServerOptions): Promise<Server>;

/**
 * The binary createServer would start: HERMES_EMULATOR_BIN, else PATH, in env (default process.env);
 * throws EmulatorError.
 */
export function findBinary(env?: Environment): string;

/** The serve arguments for options. */
export function serveArgs(options: ServerOptions): string[];

/**
 * No binary, or the binary did not start (the message says why and how to get one); or a control call
 * after the server's close(), which sends nothing: "control: GET /__admin/clock: the emulator is closed
 * (server.close() was called)", or after the binary ended by itself: "… hermes-emulator exited (code 2)
 * while in use; stderr: …".
 */
export class EmulatorError extends Error {}

/** A control answer outside 2xx. */
export class ControlError extends Error {
  /**
   * Reads the envelope of body (admin or Hermes); a body that is not one is the message as it is. For
   * tests that stand in for the control plane: `new ControlError("POST", path, 404, text)`.
   */
  constructor(method: string, path: string, status: number, body: string);
  method: string;
  path: string;
  status: number;
  /** The envelope's type, e.g. "mockingbird_admin" or "invalid_request_error". */
  type: string;
  /** The Hermes envelope's code (e.g. "run_not_found"), null otherwise. */
  code: string | null;
  /** The raw response body. */
  body: string;
}

/** A schema of the control plane's contract (admin.yaml), generated into types/admin.d.ts. */
export type AdminSchema<K extends keyof AdminComponents["schemas"]> = AdminComponents["schemas"][K];
/** The global controlled clock (controls §5). */
export type ClockState = AdminSchema<"ClockState">;
/** What an observation may set (controls §11.1). */
export type Observation = AdminSchema<"Observation">;
/** A scripted non-status event (controls §11.2). */
export type ScriptedEvent = AdminSchema<"ScriptedEvent">;
/** A fault rule as sent (controls §6.1). */
export type FaultRule = AdminSchema<"FaultRuleInput">;
/** A stored fault rule, as listed, with counters. */
export type StoredFault = AdminSchema<"FaultRule">;
/** One journal entry (controls §7.1); never bodies or secrets. */
export type JournalEntry = AdminSchema<"JournalEntry">;
/** A page of the journal; `next` is the cursor of the following page. */
export type JournalPage = AdminSchema<"JournalPage">;
/** A checkpoint committed by checkpoint(). */
export type Checkpoint = AdminSchema<"CheckpointCreated">;
/** A page of the namespace's runs, newest first. */
export type RunPage = AdminSchema<"RunPage">;
/** One run's full view: record, owner, keys, approvals, steers, transport. */
export type RunView = AdminSchema<"RunView">;
/** A scenario file's JSON form (docs/scenarios.md): what putScenarios sends and scenarios() answers. */
export type ScenarioFile = AdminSchema<"ScenarioFile">;
/** One scenario of a set: name, match, steps, if_denied, on_stop, steers. */
export type Scenario = AdminSchema<"Scenario">;
/** One scenario step: `after` and exactly one action. */
export type ScenarioStep = AdminSchema<"ScenarioStep">;
/** Filter of POST /__admin/requests/count. */
export type CountFilter = AdminSchema<"CountFilter">;

/**
 * The control plane of one emulator, in one namespace (controls.md). A bad argument — a run id that is
 * not a non-empty string, an unknown option name, a missing clock value, a path without its "/" — throws
 * (the constructor and in()) or rejects (the calls) with TypeError naming the call, and sends nothing.
 */
export class Control {
  /**
   * baseURL: http:// or https://. timeoutMs: how long one call may take, answer included; default 30000,
   * 0 = no limit, at most 2147483647 (RangeError otherwise).
   */
  constructor(baseURL: string, options?: { namespace?: string; adminKey?: string; timeoutMs?: number });
  readonly baseURL: string;
  readonly namespace: string | undefined;
  readonly adminKey: string | undefined;
  /** Past it a call rejects with an Error named "TimeoutError"; `in()` keeps it. */
  readonly timeoutMs: number;
  /** A Control acting in another namespace. */
  in(namespace: string): Control;
  /**
   * Any control request; the decoded 2xx answer, else throws ControlError (EmulatorError once the server
   * this control came from is closed).
   */
  request<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;

  observe(runId: string, observation: Observation): Promise<Run>;
  events(runId: string, ...events: ScriptedEvent[]): Promise<AdminSchema<"EventsResult">>;
  deliver(runId: string): Promise<number>;
  restart(owner: "stale" | "alive"): Promise<AdminSchema<"RestartResult">>;
  scope(profile: string, identity: string): Promise<void>;
  sweep(): Promise<number>;
  drain(draining: boolean): Promise<void>;
  draining(): Promise<boolean>;
  /** The namespace's runs, newest first (status filter, page size, cursor from the previous page's next). */
  runs(query?: { status?: string; limit?: number; cursor?: string }): Promise<RunPage>;
  /** One run's full view. */
  run(runId: string): Promise<RunView>;
  /** Replaces the namespace's scenario set; resolves to the number of scenarios (400 ControlError if invalid). */
  putScenarios(set: ScenarioFile): Promise<number>;
  /** The namespace's set, else the server's --scenarios default, else { scenarios: [] }. */
  scenarios(): Promise<ScenarioFile>;
  /** No scenarios in the namespace (not even the default) until the next putScenarios. */
  deleteScenarios(): Promise<void>;
  reset(options?: { all?: boolean }): Promise<string[]>;
  namespaces(): Promise<string[]>;

  readonly clock: {
    get(): Promise<ClockState>;
    set(epochMs: number): Promise<ClockState>;
    freezeAt(epochMs: number): Promise<ClockState>;
    freeze(): Promise<ClockState>;
    unfreeze(): Promise<ClockState>;
    /** Moves the clock by ms (may be negative, fractions allowed). */
    advance(ms: number): Promise<ClockState>;
    /** Back to the wall clock: offset 0, live. */
    reset(): Promise<ClockState>;
  };

  addFault(rule: FaultRule): Promise<StoredFault | AdminSchema<"PresetApplied">>;
  /** The stored rules of a preset; overrides replace its fields (none: undefined or null). */
  applyPreset(name: string, overrides?: Partial<FaultRule> | null): Promise<StoredFault[]>;
  faults(): Promise<StoredFault[]>;
  deleteFaults(id?: string): Promise<void>;

  /** One page of this namespace's journal (oldest first; every namespace's with `all`); `next` continues it. */
  requests(query?: { since?: number | string; status?: number; limit?: number; operationId?: string; cursor?: string; all?: boolean | 1 }): Promise<JournalPage>;
  /** How many journal entries match (WireMock-style verification). */
  count(filter?: CountFilter): Promise<number>;
  clearRequests(options?: { all?: boolean }): Promise<void>;
  metrics(): Promise<AdminSchema<"Metrics">>;
  timeline(): Promise<AdminSchema<"Timeline">>;
  checkpoint(branch?: string): Promise<Checkpoint>;
  checkout(branch: string, checkpoint: string): Promise<AdminSchema<"CheckoutResult">>;
}
