// A media type (RFC 9110 §8.3.1: type/subtype, then parameters) as it may
// stand in a Content-Type header. Used by the send body (an attachment's
// content_type must be one) and by downloads (a stored type that is not one
// is served as application/octet-stream).
const TOKEN = "[A-Za-z0-9!#$%&'*+.^_`|~-]+";
const MEDIA_TYPE = new RegExp(`^${TOKEN}/${TOKEN}(?:\\s*;\\s*${TOKEN}=(?:${TOKEN}|"[^"\\\\\\x00-\\x1f\\x7f]*"))*$`);

/** The stored content type when it is a well-formed media type, else `application/octet-stream`. */
export function safeContentType(contentType: string): string {
  const value = contentType.trim();
  return MEDIA_TYPE.test(value) ? value : 'application/octet-stream';
}
