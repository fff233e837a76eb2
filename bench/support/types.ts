// Shapes shared by the benchmark's parts.

export interface LoadOptions {
  /** Seconds of measured load per target per round. */
  duration: number;
  /** Seconds of unmeasured load per target before the first round. */
  warmup: number;
  connections: number;
  /** Rounds of health → authenticated → …; each target's figures are the mean over rounds. */
  rounds: number;
  /** Sequential requests per target for counting database transactions. */
  sequential: number;
}

/** What `bootstrap` created: a tenant set up over the public API as a user would. */
export interface Tenant {
  platformToken: string;
  projectId: string;
  /** Project API keys holding `apikeys:read`; the first one drives the load. */
  keys: { id: string; token: string }[];
}

export interface Target {
  name: string;
  path: string;
  /** GET unless given. */
  method?: 'GET' | 'POST';
  /** Sent with every request (POST targets). */
  body?: string;
  headers?: Record<string, string>;
  /** The Worker to load: a variant's; default the stack's own. */
  baseUrl?: string;
  /** Fail the benchmark unless every response is 200. */
  requireAll200?: boolean;
  /** The status every response must have when counting transactions; 200 (201 for POST) unless given. */
  expectStatus?: number;
}

export interface RunResult {
  round: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  durationS: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
}

export interface TargetResult {
  name: string;
  path: string;
  /** Means over the rounds. */
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Sums over the rounds. */
  non2xx: number;
  errors: number;
  runs: RunResult[];
  /** Database transactions per request over `sequential` sequential requests. */
  transactions: TransactionCount;
}

export interface Measurement {
  settings: Record<string, string>;
  targets: TargetResult[];
}

export interface TransactionCount {
  requests: number;
  /** Δ(xact_commit + xact_rollback) of the stack's database. */
  transactions: number;
  /** Δsessions: connections the bridge opened meanwhile; each cost one start-up transaction, subtracted. */
  sessions: number;
  perRequest: number;
}
