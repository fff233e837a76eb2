// The token of an `Authorization: Bearer <token>` header, read one way for
// authentication and for the rate limiter's choice of bucket alike.
const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** The token, or undefined when the header is absent or not of the Bearer form. */
export function bearerToken(authorization: string | undefined): string | undefined {
  return authorization === undefined ? undefined : BEARER.exec(authorization)?.[1];
}
