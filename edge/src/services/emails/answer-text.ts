// The idempotency record keeps a send's first answer as its exact JSON text,
// and is written in the send's one statement, where only the SQL knows which
// recipients are suppressed. So the text goes in as pieces: the answer's JSON
// with each recipient's `status` and `error_message` cut out, and for each cut
// the value's JSON both ways (suppressed or not). The statement joins the
// pieces, picking by the suppressions it reads (`answerTextSql` in send.ts);
// the result is byte for byte JSON.stringify of the answer the route sends.
import { sql, type SQLWrapper } from 'drizzle-orm';
import type { SendResult } from '../../contracts/email.js';
import { answerOf, outcome, REASON_SLOT, suppressionKey, type MessagePlan, type Outcome } from './plan.js';

/** One piece: text, then (but for the last) the value of one cut. */
export interface AnswerPiece {
  /** Order of the piece in the text. */
  n: number;
  part: string;
  /** The recipient's suppression key (`suppressionKey`: stream and address), whose outcome fills the cut. */
  address?: string;
  /** The cut's JSON when the recipient is not suppressed, and when it is. */
  plain?: string;
  suppressed?: string;
}

/** `shape(answers)` as pieces (see the file comment). */
export function answerPieces<T>(plans: MessagePlan[], shape: (results: SendResult[]) => T): AnswerPiece[] {
  // A fresh marker per answer: no text a client sent can spell it.
  const marker = crypto.randomUUID();
  const cuts: Omit<AnswerPiece, 'n' | 'part'>[] = [];
  const results = plans.map((plan) => answerOf(plan, (e) => {
    const address = suppressionKey(plan, e);
    const [plain, suppressed] = [outcome(plan, false), outcome(plan, true)];
    const cut = (pick: (o: Outcome) => unknown) => {
      cuts.push({ address, plain: JSON.stringify(pick(plain)), suppressed: JSON.stringify(pick(suppressed)) });
      return `${marker}:${cuts.length - 1}`;
    };
    // Stand-ins, cut out of the text below (hence the cast).
    return { status: cut((o) => o.status) as Outcome['status'], errorMessage: cut((o) => o.errorMessage) };
  }));
  // split() with a capture group: text, cut index, text, cut index, …, text.
  const split = JSON.stringify(shape(results)).split(new RegExp(`"${marker}:(\\d+)"`));
  const pieces: AnswerPiece[] = [];
  for (let i = 0; i < split.length; i += 2) {
    const at = split[i + 1];
    pieces.push({ n: pieces.length, part: split[i]!, ...(at === undefined ? {} : cuts[Number(at)]) });
  }
  return pieces;
}

/**
 * The joined text, as an SQL expression; `suppressed` names a relation of
 * the statement holding the suppressed addresses and their reasons (columns
 * `address`, `reason`), written in place of `REASON_SLOT`.
 */
export const answerTextSql = (pieces: AnswerPiece[], suppressed: SQLWrapper) => sql`(
  select string_agg(p.part || coalesce((select replace(p.suppressed, ${REASON_SLOT}, s.reason::text) from ${suppressed} s where s.address = p.address), p.plain, ''), '' order by p.n)
  from jsonb_to_recordset(${JSON.stringify(pieces)}::jsonb) as p(n int, part text, address text, plain text, suppressed text))`;
