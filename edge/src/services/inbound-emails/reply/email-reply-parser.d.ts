// email-reply-parser 2.1.0 ships no types (@types/email-reply-parser describes
// the 1.x API): the parts of it this folder uses.
declare module 'email-reply-parser' {
  interface Fragment {
    getContent(): string;
    isHidden(): boolean;
    isSignature(): boolean;
    isQuoted(): boolean;
  }
  interface Email { getFragments(): Fragment[]; getVisibleText(): string }
  export default class EmailReplyParser { read(text: string): Email }
}
declare module 'email-reply-parser/lib/parser/emailparser.js' {
  import type EmailReplyParser from 'email-reply-parser';
  type Email = ReturnType<EmailReplyParser['read']>;
  export default class EmailParser {
    parse(text: string): Email;
    setAnswerHeadersRegex(list: RegExp[]): this;
  }
}
declare module 'email-reply-parser/lib/regex.js' {
  const RegexList: { signatureRegex: RegExp[] };
  export default RegexList;
}
