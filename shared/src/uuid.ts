// The one UUID check: path ids, the project header and query parameters.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether text is a UUID in its canonical 8-4-4-4-12 hex form (any case). */
export function isUuid(text: string): boolean {
  return UUID.test(text);
}
