// What a service refuses, named by what happened rather than by an HTTP status:
// services run under routes, Durable Objects and the CLI alike. The HTTP layer
// (`http/errors.ts`) maps each kind to its status in one table.

export type ServiceErrorKind =
  | 'invalid'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'incomplete_body'
  | 'conflict'
  | 'too_large'
  | 'unsupported_media_type'
  | 'unprocessable'
  | 'rate_limited'
  | 'unavailable';

export class ServiceError extends Error {
  constructor(
    readonly kind: ServiceErrorKind,
    message: string,
    /** Field name → problem, when the refusal is about named fields. */
    readonly fields?: Record<string, string>,
  ) {
    super(message);
    this.name = 'ServiceError';
  }
}

/** The input fails a check the schema could not make (a limit, a missing row it names). */
export const invalid = (message: string, fields?: Record<string, string>) => new ServiceError('invalid', message, fields);
/** The caller's credential no longer holds (a revoked relay node). */
export const unauthorized = (message: string) => new ServiceError('unauthorized', message);
/** The caller is known but not allowed this (an SNS topic not in `ses.topic_arns`). */
export const forbidden = (message: string) => new ServiceError('forbidden', message);
/** No such row in the caller's scope. */
export const notFound = (message: string) => new ServiceError('not_found', message);
/** The streamed body ended before the length it announced. */
export const incompleteBody = (message: string) => new ServiceError('incomplete_body', message);
/** Clashes with what is stored (a name taken, a key reused with another body). */
export const conflict = (message: string) => new ServiceError('conflict', message);
/** A part of the body is larger than its limit. */
export const tooLarge = (message: string) => new ServiceError('too_large', message);
/** The body is not in the format the service reads. */
export const unsupportedMediaType = (message: string, fields?: Record<string, string>) =>
  new ServiceError('unsupported_media_type', message, fields);
/** Well-formed, but what it names cannot be done as stored (a template that does not render with the data). */
export const unprocessable = (message: string, fields?: Record<string, string>) => new ServiceError('unprocessable', message, fields);
/** A plan's quota or sending rate is used up. */
export const rateLimited = (message: string) => new ServiceError('rate_limited', message);
/** A service this one depends on (DNS, a resolver) did not answer; worth retrying later. */
export const unavailable = (message: string) => new ServiceError('unavailable', message);
