// Types of hermes-emulator (index.js, control.js). The public API's types are generated from
// openapi.yaml by openapi-typescript into types/openapi.d.ts (`npm run generate`); the control-plane
// shapes below follow controls.md until the control plane has its own contract (admin.yaml).
import type { components, operations, paths } from "./types/openapi.js";

export type { components, operations, paths };

/** The run record (runs-api §4), as GET /v1/runs/{run_id} answers it. */
export type Run = components["schemas"]["Run"];
/** The 202 answer of POST /v1/runs. */
export type RunCreateAccepted = components["schemas"]["RunCreateAccepted"];
/** A body of POST /v1/runs. */
export type RunCreateRequest = components["schemas"]["RunCreateRequest"];
/** One of the eight run states. */
export type RunStatus = components["schemas"]["RunStatus"];

/** Options of createServer; each maps to a flag of `hermes-emulator serve`. */
export interface ServerOptions {
  /** Fault-rate RNG seed (--seed): an integer or any string. */
  seed?: number | string;
  /** Listen port (--port); default 0, any free port. */
  port?: number;
  /** Listen address (--host); default 127.0.0.1. */
  host?: string;
  /** Require x-mockingbird-admin-key on /__admin (--admin-key); `control` sends it. */
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
  /** How long to wait for the binary to listen; default 10000 ms. */
  startTimeoutMs?: number;
}

/** A running emulator: a child process, stopped by close() (and when this process exits). */
export interface Server {
  /** Base URL, e.g. "http://127.0.0.1:39781" (no trailing slash). */
  url: string;
  host: string;
  port: number;
  /** Process id of the binary. */
  pid: number | undefined;
  /** Control plane of the default namespace; `control.in("t1")` for another. */
  control: Control;
  /** Stops the binary gracefully (SIGTERM, SIGKILL after 5 s); resolves once it exited. Idempotent. */
  close(): Promise<void>;
}

/** Starts `hermes-emulator serve` and resolves once it listens. */
export function createServer(options?: ServerOptions): Promise<Server>;

/** The binary createServer would start: HERMES_EMULATOR_BIN, else PATH; throws EmulatorError. */
export function findBinary(env?: NodeJS.ProcessEnv): string;

/** The serve arguments for options. */
export function serveArgs(options: ServerOptions): string[];

/** No binary, or the binary did not start; the message says why and how to get one. */
export class EmulatorError extends Error {}

/** A control answer outside 2xx. */
export class ControlError extends Error {
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

/** The global controlled clock (controls §5). */
export interface ClockState {
  /** Epoch milliseconds. */
  now: number;
  frozen: boolean;
  offsetMs: number;
}

/** What an observation may set (controls §11.1). */
export interface Observation {
  status: RunStatus;
  last_event?: string;
  output?: string;
  usage?: { input_tokens: number; output_tokens: number; total_tokens: number };
  error?: string;
  approval?: Record<string, unknown>;
  pending_steer?: string;
}

/** A scripted non-status event (controls §11.2). */
export type ScriptedEvent =
  | { event: "message.delta"; delta: string }
  | { event: "tool.started"; tool: string; preview?: string | null }
  | { event: "tool.completed"; tool: string; duration?: number; error?: boolean }
  | { event: "reasoning.available"; text?: string }
  | ({ event: "subagent.start" | "subagent.complete"; preview?: string | null } & Record<string, unknown>);

/** A fault rule (controls §6.1) as sent; the emulator answers with the stored rule. */
export interface FaultRule {
  id?: string;
  /** Default: the control's namespace; "*" = all. */
  namespace?: string;
  operationId?: string;
  method?: string;
  pathPrefix?: string;
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Uses before the rule retires; absent = unlimited. */
  count?: number;
  /** Fraction of matching requests that fire (seeded RNG). */
  rate?: number;
  delayMs?: number;
  /** Close the connection without a response. */
  drop?: boolean;
  effect?: string;
  params?: Record<string, unknown>;
  preset?: string;
}

/** A stored fault rule, as listed, with counters. */
export interface StoredFault extends FaultRule {
  id: string;
  remaining?: number | null;
  hits?: number;
}

/** One journal entry (controls §7.1); never bodies or secrets. */
export interface JournalEntry {
  service: "hermes";
  namespace: string;
  operationId?: string;
  method: string;
  path: string;
  /** 0 when the connection was dropped. */
  status: number;
  durationMs: number;
  unmatched: boolean;
  faultId?: string;
  ids?: { runId?: string };
  accepted?: boolean;
  checkpoint?: string;
  request?: { contentType: string | null; bodyBytes: number | null; transferEncoding: string | null };
  issues?: { in: "body" | "header" | "path" | "query"; pointer: string }[];
  at: string;
}

/** A checkpoint of a namespace's timeline (controls §8). */
export interface Checkpoint {
  id: string;
  branch: string;
  parent: string | null;
  at: number;
  records?: number;
}

/** The control plane of one emulator, in one namespace (controls.md). */
export class Control {
  constructor(baseURL: string, options?: { namespace?: string; adminKey?: string });
  readonly baseURL: string;
  readonly namespace: string | undefined;
  readonly adminKey: string | undefined;
  /** A Control acting in another namespace. */
  in(namespace: string): Control;
  /** Any control request; the decoded 2xx answer, else throws ControlError. */
  request<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;

  observe(runId: string, observation: Observation): Promise<Run>;
  events(runId: string, ...events: ScriptedEvent[]): Promise<{ run_id: string; emitted: number; buffered: number; simulated: true }>;
  deliver(runId: string): Promise<number>;
  restart(owner: "stale" | "alive"): Promise<{ owner: "stale" | "alive"; retained: number; discarded: number }>;
  scope(profile: string, identity: string): Promise<void>;
  sweep(): Promise<number>;
  drain(draining: boolean): Promise<void>;
  draining(): Promise<boolean>;
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

  addFault(rule: FaultRule): Promise<StoredFault | { preset: string; rules: StoredFault[] }>;
  applyPreset(name: string, overrides?: Partial<FaultRule>): Promise<StoredFault[]>;
  faults(): Promise<StoredFault[]>;
  deleteFaults(id?: string): Promise<void>;

  requests(query?: { since?: number | string; status?: number; limit?: number; operationId?: string; all?: 1 }): Promise<{ size: number; requests: JournalEntry[] }>;
  clearRequests(options?: { all?: boolean }): Promise<void>;
  metrics(): Promise<Record<string, unknown>>;
  timeline(): Promise<{ branches: Record<string, string>; checkpoints: Checkpoint[] }>;
  checkpoint(branch?: string): Promise<Checkpoint>;
  checkout(branch: string, checkpoint: string): Promise<{ status: "ok"; branch: string; checkpoint: string }>;
}
