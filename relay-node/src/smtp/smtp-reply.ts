// Errors that become SMTP replies: smtp-server sends `responseCode` and the
// message of an error a hook hands to its callback.
import { enhancedCode } from '@edgemail/shared';

/** An error smtp-server answers with its own code and text. */
export interface SmtpReplyError extends Error {
  responseCode: number;
}

/** `5.1.1 ...`: a reply text that already starts with an enhanced status code. */
export const hasEnhancedCode = (text: string): boolean => enhancedCode(text) !== null;

/**
 * An error smtp-server turns into the reply `<code> <text>`. Give `text` its
 * enhanced status code (`5.1.1 ...`): the listener then sends it as is rather
 * than putting the library's default for `code` in front.
 *
 * @example callback(smtpReply(550, '5.1.1 <a@b.example>: recipient domain not served here'))
 */
export function smtpReply(code: number, text: string): SmtpReplyError {
  return Object.assign(new Error(text), { responseCode: code });
}

/** Whether `err` carries a reply code of its own (from a hook, a transform or the store). */
export function isSmtpReplyError(err: unknown): err is SmtpReplyError {
  return err instanceof Error && typeof (err as Partial<SmtpReplyError>).responseCode === 'number';
}
