// The API's error body, `{error, fields?}` (docs/api.md "Errors"), as a thrown
// value the pages catch: `fields` names the request fields at fault, by their
// dotted path (`permissions`, `to.1`), so each message sits next to its field.

export interface ErrorBody {
  error: string;
  fields?: Record<string, string>;
  [extra: string]: unknown;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ErrorBody,
  ) {
    super(body.error);
    this.name = 'ApiError';
  }

  /** The problem the API named for one field (a dotted path), if any. */
  field(name: string): string | undefined {
    return this.body.fields?.[name];
  }

  get fields(): Record<string, string> {
    return this.body.fields ?? {};
  }
}

function asErrorBody(status: number, error: unknown): ErrorBody {
  if (error && typeof error === 'object' && typeof (error as ErrorBody).error === 'string') return error as ErrorBody;
  if (typeof error === 'string' && error) return { error };
  return { error: `the service answered ${status}` };
}

/**
 * The data of an openapi-fetch result, or an ApiError thrown from its error
 * body. A network failure rejects before this (a TypeError from fetch).
 *
 * @example
 * const { api_keys } = await ok(api.GET('/api/v1/api-keys'));
 */
export async function ok<D, E>(call: Promise<{ data?: D; error?: E; response: Response }>): Promise<D> {
  const { data, error, response } = await call;
  if (!response.ok) throw new ApiError(response.status, asErrorBody(response.status, error));
  return data as D;
}

/** What to show for any thrown value: the API's message, or a network failure in plain words. */
export function messageOf(e: unknown): string {
  if (e instanceof ApiError) return e.message;
  if (e instanceof TypeError) return 'the service could not be reached: check your connection and try again';
  return e instanceof Error ? e.message : String(e);
}
