// Where an inbound message's bytes live in R2 (`MAIL_STORE`): everything of
// one message under one prefix, so it can be listed and removed together.
//
//   inbound/<project id>/<spool id>/raw.eml
//   inbound/<project id>/<spool id>/attachments/<index>
//
// The project comes first: a message addressed to two projects is stored once
// per project, and removing one project's record never touches the other's.

/**
 * Everything stored for one message of one project ends with this prefix.
 * @example await env.MAIL_STORE.list({ prefix: objectPrefix(projectId, spoolId) })
 */
export function objectPrefix(projectId: string, spoolId: string): string {
  return `inbound/${projectId}/${encodeURIComponent(spoolId)}/`;
}

/** The raw message (`message/rfc822`), as the relay node spooled it. */
export function rawKey(projectId: string, spoolId: string): string {
  return `${objectPrefix(projectId, spoolId)}raw.eml`;
}

/** Attachment `index` (zero-based, in the record's `attachments` order). */
export function attachmentKey(projectId: string, spoolId: string, index: number): string {
  return `${objectPrefix(projectId, spoolId)}attachments/${index}`;
}
