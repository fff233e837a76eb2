/// <reference path="./email-reply-parser.d.ts" />
// Reply stripping (docs/inbound.md, "Reply stripping"): the new text of a
// reply without its quoted history, and its signature block apart.
//
// email-reply-parser (MIT, GitHub's EmailReplyParser ported by Crisp) finds
// the signature: "-- ", "Sent from my iPhone" and its translations, sign-offs
// such as "Best regards,". Its quote handling falls short (2.1.0 keeps `>`
// lines that no "wrote:" line introduces, misses Outlook's header block
// without an address in brackets, and joins wrapped "On … wrote:" lines with
// regular expressions over the whole text), so the quoted history is found
// first by our own rules below, line by line, and the library is given only
// what is left, with its own quote-header expressions switched off (they are
// matched over the whole text and took 0.5 s on 2,000 hostile characters).
// Lines longer than SIGNATURE_MAX_LINE (no signature line is) are handed to
// it as a placeholder and put back after, since its per-line expressions
// cost the square of a line's length.
import EmailParser from 'email-reply-parser/lib/parser/emailparser.js';
import RegexList from 'email-reply-parser/lib/regex.js';
import { htmlToText } from './html-text.js';

/** The part of a message's text that is looked at; a reply is at its top. Bounds the cost. */
export const STRIP_MAX_CHARS = 16 * 1024;
/** A quote header is at most this many lines (a client wraps a long "On … wrote:") and characters. */
const HEADER_MAX_LINES = 3;
const HEADER_MAX_CHARS = 400;
const SIGNATURE_MAX_LINE = 200;
// Switches the library's quote headers off; they are one list for every parser.
new EmailParser().setAnswerHeadersRegex([]);
// Our signature lines the library lacks: mobile footers and sign-offs in
// German, Dutch, Spanish and Portuguese (each bounded, tested per line).
RegexList.signatureRegex.push(
  /^(Enviado do meu|Gesendet von meinem|Gesendet mit|Enviado con|Verzonden met) \S.{0,60}$/,
  /^(Mit freundlichen Grüßen|(Viele|Liebe|Beste) Grüße|Met vriendelijke groet(en)?|(Un )?saludos?( cordiales)?|Atenciosamente|Cumprimentos),?$/i,
);

export interface StrippedReply { stripped_text: string; stripped_signature: string | null }

// "On <date>, <name> wrote:" in English, German, French, Spanish, Dutch,
// Portuguese, Italian, Danish/Norwegian/Swedish and Polish. Tested on at most
// HEADER_MAX_CHARS characters of at most HEADER_MAX_LINES lines joined.
const WROTE = /^(on|am|le|el|op|em|il|den|w dniu|dnia)\s.*\s(wrote|schrieb|a écrit|escribió|schreef|escreveu|ha scritto|skrev|napisał|pisze)(\s.*)?\s?:$/i;
const WROTE_NAME_FIRST = /^\S.*\s(wrote|schrieb|a écrit|escribió|schreef|escreveu|skrev)\s?:$/i;
// Outlook's "-----Original Message-----" and its translations; a forward's marker.
const ORIGINAL = /^-{2,}\s?(original message|ursprüngliche nachricht|message d'origine|mensaje original|mensagem original|oorspronkelijk bericht|messaggio originale)\s?-{2,}$/i;
const FORWARDED = /^(-{2,}\s?forwarded message\s?-{2,}|begin forwarded message:)$/i;
// Outlook's header block: From: then, within the next three lines, Sent/Date: (each language's words).
const FROM = /^\*?(from|von|de|van|da|fra|från|od)\s?:\*?\s/i;
const SENT = /^\*?(sent|date|gesendet|datum|envoyé|enviado|enviado el|verzonden|enviada|data|inviato|sendt|skickat|wysłano)\s?:/i;
const OUTLOOK_RULE = /^_{20,}$/;

const isQuoted = (line: string) => line.trimStart().startsWith('>');

interface Header { at: number; length: number; outlook: boolean }

/** Where the quoted history starts: the header line's index and how many lines it takes, or null. */
function findHeader(lines: string[]): Header | null {
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (!line || isQuoted(line) || line.length > HEADER_MAX_CHARS) continue;
    if (ORIGINAL.test(line) || FORWARDED.test(line)) return { at: i, length: 1, outlook: true };
    if (OUTLOOK_RULE.test(line) && FROM.test(lines[i + 1]?.trim() ?? '')) return { at: i, length: 1, outlook: true };
    if (FROM.test(line) && lines.slice(i + 1, i + 4).some((l) => SENT.test(l.trim()))) return { at: i, length: 1, outlook: true };
    let joined = '';
    for (let n = 0; n < HEADER_MAX_LINES && i + n < lines.length; n++) {
      joined = `${joined} ${lines[i + n]!.trim()}`.trim();
      const next = lines[i + n]!;
      if (joined.length > HEADER_MAX_CHARS || (n > 0 && (!next.trim() || isQuoted(next)))) break;
      if (!joined.endsWith(':')) continue;
      // "Ann <ann@example.org> wrote:" stands on one line; "On …" may be wrapped.
      if (WROTE.test(joined) || (n === 0 && WROTE_NAME_FIRST.test(joined))) return { at: i, length: n + 1, outlook: false };
    }
  }
  return null;
}

/**
 * The reply's own lines. Before an Outlook-style header everything after it
 * is history (it is not `>`-quoted); after an "On … wrote:" line only the
 * `>` lines are, and text below them (bottom-posting) is the reply's. Any
 * other `>` line is quoted too (plain quoting, interleaved answers).
 */
function unquoted(text: string): string {
  const lines = text.split('\n');
  const header = findHeader(lines);
  let kept = lines;
  if (header) {
    const before = lines.slice(0, header.at);
    kept = header.outlook ? before : [...before, ...lines.slice(header.at + header.length)];
  }
  return kept.filter((l) => !isQuoted(l)).join('\n');
}

const tidy = (text: string) => text.replace(/[ \t]+$/gm, '').replace(/\n{3,}/g, '\n\n').trim();

/**
 * @example stripReply({ text: 'Yes.\n\nOn Mon, Ann <a@x.org> wrote:\n> Lunch?', html: '' }) // { stripped_text: 'Yes.', stripped_signature: null }
 */
export function stripReply(body: { text: string; html: string }): StrippedReply {
  // An HTML-only message: its text from the HTML (the relay node converts nothing).
  const source = body.text.trim() ? body.text : htmlToText(body.html.slice(0, STRIP_MAX_CHARS * 4));
  const text = source.slice(0, STRIP_MAX_CHARS).replace(/\r\n?/g, '\n');
  const long: string[] = [];
  const short = unquoted(text).split('\n').map((l) => (l.length > SIGNATURE_MAX_LINE ? `\u0000${long.push(l) - 1}` : l)).join('\n');
  const restore = (s: string) => s.replace(/^\u0000(\d+)$/gm, (_, i: string) => long[Number(i)]!);
  const visible: string[] = [];
  const signature: string[] = [];
  for (const f of new EmailParser().parse(short).getFragments()) {
    if (f.isSignature()) signature.push(restore(f.getContent()));
    else if (!f.isHidden()) visible.push(restore(f.getContent()));
  }
  const sig = tidy(signature.join('\n'));
  return { stripped_text: tidy(visible.join('\n')), stripped_signature: sig || null };
}
