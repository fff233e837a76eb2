// Where an outbound message's attachments live in R2 (`MAIL_STORE`), written
// by the send routes before the message's rows and read by the relay claim:
//
//   outbound/<project id>/<message id>/<index>
//
// `message id` is the `outbound_messages` id; `index` is zero-based, in the
// order of the send's `attachments` (and of the row's `attachments` column).

/** Everything stored for one message ends with this prefix. */
export function outboundPrefix(projectId: string, messageId: string): string {
  return `outbound/${projectId}/${messageId}/`;
}

export function outboundAttachmentKey(projectId: string, messageId: string, index: number): string {
  return `${outboundPrefix(projectId, messageId)}${index}`;
}
