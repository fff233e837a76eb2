// One error class per refusal the API answers with, all under EdgemailError,
// carrying what the answer said: its status, its `error` text, its field
// errors, and the request id when the API sent one.

export interface ErrorDetails {
  status: number;
  message: string;
  fields?: Record<string, string>;
  requestId?: string;
  headers: Headers;
}

/** Every refusal or failure of a request made by this client. */
export class EdgemailError extends Error {
  /** The HTTP status; 0 when no answer arrived (network failure, timeout). */
  readonly status: number;
  /** Field name → problem, on validation failures. */
  readonly fields: Record<string, string>;
  /** The `X-Request-Id` the API answered with, where it sent one (name it when reporting a 5xx). */
  readonly requestId: string | undefined;
  /** The answer's headers (empty when no answer arrived). */
  readonly headers: Headers;

  constructor(details: ErrorDetails) {
    super(details.message);
    this.name = new.target.name;
    this.status = details.status;
    this.fields = details.fields ?? {};
    this.requestId = details.requestId;
    this.headers = details.headers;
  }
}

/** No answer arrived: the connection failed or `timeoutMs` passed. */
export class ConnectionError extends EdgemailError {
  constructor(message: string, readonly cause?: unknown) {
    super({ status: 0, message, headers: new Headers() });
  }
}
export class TimeoutError extends ConnectionError {}

/** 400: the request was malformed or a field is invalid (`fields` names each). */
export class BadRequestError extends EdgemailError {}
/** The same class under the name most code reaches for. */
export const ValidationError = BadRequestError;
/** 401: no credential, or one that is unknown, revoked or expired. */
export class AuthenticationError extends EdgemailError {}
/** 403: the credential lacks a permission (`requiredPermission` names it when the API does) or is otherwise refused. */
export class PermissionDeniedError extends EdgemailError {
  /** The `resource:action` the API said is required (`permission emails:write required`); the first when it names alternatives. */
  get requiredPermission(): string | undefined {
    return this.requiredPermissions[0];
  }

  /** Every permission that would have sufficed (`permission a:read or b:read required`). */
  get requiredPermissions(): string[] {
    return /permission (\S+(?: or \S+)*) required/.exec(this.message)?.[1]?.split(' or ') ?? [];
  }
}
/** 404: no such resource in this project. */
export class NotFoundError extends EdgemailError {}
/** 409: a conflict with the current state (a duplicate, an idempotency key reused with another body). */
export class ConflictError extends EdgemailError {}
/** 413: the body is larger than the route accepts. */
export class PayloadTooLargeError extends EdgemailError {}
/** 422: well-formed but cannot be processed (a template that does not render). */
export class UnprocessableEntityError extends EdgemailError {}
/**
 * 429: either the request rate (`kind: 'request_rate'`, with `Retry-After` and
 * `RateLimit-*` headers: waiting helps) or the plan's hourly/daily send limit
 * (`kind: 'plan_limit'`: waiting seconds does not help).
 */
export class RateLimitedError extends EdgemailError {
  /** Seconds the API asked to wait (`Retry-After`), when it said. */
  readonly retryAfter: number | undefined;
  readonly kind: 'request_rate' | 'plan_limit';
  /** The `RateLimit-Limit`, `-Remaining` and `-Reset` headers, when sent. */
  readonly rateLimit: { limit: number; remaining: number; reset: number } | undefined;

  constructor(details: ErrorDetails) {
    super(details);
    const h = details.headers;
    this.retryAfter = parseRetryAfter(h.get('retry-after'));
    // A request-rate refusal always names when to retry; a plan limit is a send refused for the hour or day.
    this.kind = this.retryAfter === undefined && / email limit reached /.test(this.message) ? 'plan_limit' : 'request_rate';
    const limit = h.get('ratelimit-limit');
    this.rateLimit = limit === null ? undefined
      : { limit: Number(limit), remaining: Number(h.get('ratelimit-remaining') ?? 0), reset: Number(h.get('ratelimit-reset') ?? 0) };
  }

  get isPlanLimit(): boolean { return this.kind === 'plan_limit'; }
}
/** 5xx: the service failed or a dependency did not answer (503 carries `Retry-After`). */
export class InternalServerError extends EdgemailError {
  readonly retryAfter: number | undefined;
  constructor(details: ErrorDetails) {
    super(details);
    this.retryAfter = parseRetryAfter(details.headers.get('retry-after'));
  }
}

/** Seconds from a `Retry-After` header (delta-seconds or an HTTP date). */
export function parseRetryAfter(value: string | null): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - Date.now()) / 1000);
}

const CLASS_OF_STATUS: Record<number, new (d: ErrorDetails) => EdgemailError> = {
  400: BadRequestError, 401: AuthenticationError, 403: PermissionDeniedError, 404: NotFoundError,
  409: ConflictError, 413: PayloadTooLargeError, 422: UnprocessableEntityError, 429: RateLimitedError,
};

/** The error for a refused answer, its body read as the API's `{error, fields}`. */
export async function errorFromResponse(response: Response): Promise<EdgemailError> {
  const text = await response.text().catch(() => '');
  let message = text || response.statusText || `HTTP ${response.status}`;
  let fields: Record<string, string> | undefined;
  try {
    const body = JSON.parse(text) as { error?: unknown; fields?: unknown };
    if (typeof body.error === 'string') message = body.error;
    if (body.fields && typeof body.fields === 'object') fields = body.fields as Record<string, string>;
  } catch { /* not JSON: the text is the message */ }
  const details: ErrorDetails = {
    status: response.status, message, fields, headers: response.headers,
    requestId: response.headers.get('x-request-id') ?? undefined,
  };
  const Class = CLASS_OF_STATUS[response.status] ?? (response.status >= 500 ? InternalServerError : EdgemailError);
  return new Class(details);
}
