// Typed refusals the SMTP layer turns into replies after the final dot. Each
// carries smtp-server's `responseCode`, and its message starts with the
// enhanced status code, so `callback(err)` in onData answers e.g.
// `554 5.5.0 Bare <LF> ...` as is (the listener's smtp-reply convention).

/**
 * Message data had a line ending that is not CRLF (the smuggling vector of
 * `<LF>.<CRLF>` and `<CR>.<CR><LF>`). Reply: `554 5.5.0`.
 */
export class BareLineEndingError extends Error {
  readonly responseCode = 554;
  readonly enhancedStatus = '5.5.0';
  constructor(
    /** Which byte was bare. */
    readonly kind: 'CR' | 'LF',
    /** Its offset in the message data, from 0. */
    readonly offset: number,
  ) {
    super(`5.5.0 Bare <${kind}> in message data at byte ${offset}: lines must end in <CR><LF>`);
    this.name = 'BareLineEndingError';
  }
}

/** Message data went past the size limit. Reply: `552 5.3.4`. */
export class MessageTooLargeError extends Error {
  readonly responseCode = 552;
  readonly enhancedStatus = '5.3.4';
  constructor(
    readonly maxBytes: number,
    /** Every byte received, counted to the end although none past the limit was kept. */
    readonly bytesSeen: number,
  ) {
    super(`5.3.4 Message size exceeds fixed limit of ${maxBytes} bytes`);
    this.name = 'MessageTooLargeError';
  }
}
