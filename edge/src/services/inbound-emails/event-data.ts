import type { InboundEmailRecord } from '../../contracts/inbound-email.js';

/**
 * The `data` of an `inbound.received` event: the record's metadata, without
 * its bodies and headers (the spec: metadata only), but with the stripped
 * reply (`stripped_text`, `stripped_signature`). Attachments appear as
 * their metadata, as in the record. Ingest and the retry route both build it
 * here, so a re-emitted event is the same as the first.
 */
export function inboundReceivedData(record: InboundEmailRecord): Record<string, unknown> {
  const { text_body: _text, html_body: _html, headers: _headers, ...metadata } = record;
  return metadata;
}
