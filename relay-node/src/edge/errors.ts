// What can go wrong when the node calls the edge, as types the callers act on:
// revoked → stop; 429 → wait Retry-After; any other 4xx but 408 → permanent;
// 408, 5xx, network, timeout → retry.

/** Any failed call to the edge. `retryable` says whether asking again may help. */
export class EdgeError extends Error {
  constructor(
    message: string,
    /** The HTTP status, or null when no answer came (network, timeout). */
    readonly status: number | null,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'EdgeError';
  }
}

/**
 * 401 `relay node revoked`: the operator revoked this node. Nothing it sends
 * will be taken any more; the node stops its listeners and exits non-zero.
 */
export class NodeRevokedError extends EdgeError {
  constructor(readonly route: string) {
    super(`the edge says this relay node was revoked (401 on ${route}): re-enrol it with \`edgemail relay enroll\``, 401, false);
    this.name = 'NodeRevokedError';
  }
}

/**
 * 401 for any other reason (`invalid relay node credential`): the token in
 * node.json is not one the edge knows (another installation, a reset
 * database). Fatal like a revocation.
 */
export class NodeCredentialError extends EdgeError {
  constructor(readonly route: string, detail: string) {
    super(`the edge refused this relay node's credential (401 on ${route}: ${detail}): re-enrol it with \`edgemail relay enroll\``, 401, false);
    this.name = 'NodeCredentialError';
  }
}

/** 429: the edge asks the node to slow down; the message stays spooled and the node waits. */
export class EdgeRateLimitedError extends EdgeError {
  constructor(
    readonly route: string,
    /** From `Retry-After`; null when the edge gave none (then the caller's backoff decides). */
    readonly retryAfterMs: number | null,
  ) {
    super(`the edge rate-limited ${route} (429${retryAfterMs === null ? '' : `, retry after ${Math.ceil(retryAfterMs / 1000)} s`})`, 429, true);
    this.name = 'EdgeRateLimitedError';
  }
}

/** Any other 4xx but 408: the request itself is wrong; the same request will be refused again. */
export class EdgeRefusedError extends EdgeError {
  constructor(
    readonly route: string,
    status: number,
    /** The edge's `error` message (or the body's start). */
    readonly detail: string,
  ) {
    super(`the edge refused ${route} (${status}): ${detail}`, status, false);
    this.name = 'EdgeRefusedError';
  }
}

/** 5xx, 408, a network failure or a timeout: the edge may answer later. */
export class EdgeUnavailableError extends EdgeError {
  constructor(readonly route: string, status: number | null, detail: string) {
    super(`the edge could not be reached for ${route} (${status ?? 'no answer'}): ${detail}`, status, true);
    this.name = 'EdgeUnavailableError';
  }
}

/**
 * 426: the edge does not serve the relay contract this node speaks
 * (docs/relay-protocol.md, "Versions"). Nothing the node sends is taken until
 * one side is upgraded, so every caller waits as for an unreachable edge: mail
 * stays spooled, never dead-lettered. `detail` says which side to upgrade.
 */
export class EdgeContractRefusedError extends EdgeUnavailableError {
  constructor(route: string, readonly detail: string) {
    super(route, 426, detail);
    this.message = `the edge does not serve this node's relay contract (426 on ${route}): ${detail}`;
    this.name = 'EdgeContractRefusedError';
  }
}

/**
 * A 2xx whose body does not fit the relay protocol (shared/src/relay-protocol/):
 * an edge mid-deploy, or a proxy's page. Retried like an unavailable edge (a
 * forward is idempotent by spool id); `field` is the first that does not fit.
 */
export class EdgeAnswerMalformedError extends EdgeError {
  constructor(readonly route: string, status: number, readonly field: string, readonly problem: string) {
    super(`the edge's answer to ${route} (${status}) does not fit the relay protocol: ${field}: ${problem}`, status, true);
    this.name = 'EdgeAnswerMalformedError';
  }
}

/** A revocation or an unknown credential: the node cannot go on. */
export function isFatalEdgeError(err: unknown): err is NodeRevokedError | NodeCredentialError {
  return err instanceof NodeRevokedError || err instanceof NodeCredentialError;
}

/**
 * `Retry-After` in ms: delta-seconds or an HTTP date (RFC 9110 10.2.3);
 * null when absent or unreadable. Never negative.
 */
export function parseRetryAfter(value: string | null, now = Date.now()): number | null {
  if (value === null) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}
