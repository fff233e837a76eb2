// RFC 3463 enhanced status codes (`5.1.1`) at the start of an SMTP reply. One
// reading for the edge (hard bounces), a relay node's shared-pool outcome and
// its listener's own reply texts.

/** An enhanced status code after an optional reply code: `550 5.1.1 …`, `550-5.1.1 …`, or a bare `5.1.1 …`. */
const ENHANCED = /^(?:[2-5]\d\d[ -])?([245])\.(\d{1,3})\.(\d{1,3})(?=[\s,;:]|$)/;

export interface EnhancedCode {
  class: number;
  subject: number;
  detail: number;
}

/**
 * The enhanced status code at the start of a reply (or of a reply's text), or
 * null when there is none. A code later in the text is not one.
 *
 * @example enhancedCode('550 5.1.1 no such user') // { class: 5, subject: 1, detail: 1 }
 * @example enhancedCode('550 no such user (see 5.1.1)') // null
 */
export function enhancedCode(reply: string): EnhancedCode | null {
  const m = ENHANCED.exec(reply.trimStart());
  return m ? { class: Number(m[1]), subject: Number(m[2]), detail: Number(m[3]) } : null;
}

/** `5.1.1`: the code as written in a reply. */
export const formatEnhancedCode = (code: EnhancedCode): string => `${code.class}.${code.subject}.${code.detail}`;
