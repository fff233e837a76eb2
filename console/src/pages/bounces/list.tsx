// Bounces and complaints, newest first, a page at a time (keyset: `next.before`
// and `before_id`), filtered by type and recipient: the SMTP reply code, the
// enhanced status and the server's own words, and a link to the email.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { api, type ApiSchemas } from '../../api/client';
import { ApiError, messageOf, ok } from '../../api/errors';
import { Button, Field, FormError, Page, Table } from '../../ui';
import '../analytics/insights.css';

type Bounce = ApiSchemas['Bounce'];
type Kind = Bounce['type'];
type Cursor = ApiSchemas['BounceCursor'];
const PAGE = 50;
const KINDS: { value: Kind; label: string; hint: string }[] = [
  { value: 'hard', label: 'Hard', hint: 'the address is bad: suppressed' },
  { value: 'soft', label: 'Soft', hint: 'a delay or temporary failure: recorded only' },
  { value: 'complaint', label: 'Complaint', hint: 'the recipient reported the mail: suppressed' },
];

export default function BounceList() {
  const [kind, setKind] = useState<Kind | ''>('');
  const [recipient, setRecipient] = useState('');
  const [applied, setApplied] = useState('');
  const [rows, setRows] = useState<Bounce[] | undefined>();
  const [next, setNext] = useState<Cursor>(null);
  const [error, setError] = useState<string>();
  const [fieldError, setFieldError] = useState<string>();
  const load = useCallback(async (cursor: Cursor) => {
    setError(undefined);
    setFieldError(undefined);
    try {
      const data = await ok(api.GET('/api/v1/bounces', {
        params: { query: { limit: PAGE, ...(kind ? { type: kind } : {}), ...(applied ? { recipient: applied } : {}), ...(cursor ?? {}) } },
      }));
      setRows((r) => (cursor ? [...(r ?? []), ...data.bounces] : data.bounces));
      setNext(data.next);
    } catch (e) {
      const named = e instanceof ApiError ? e.field('recipient') : undefined;
      if (named) setFieldError(named);
      else setError(messageOf(e));
      setRows((r) => r ?? []);
    }
  }, [kind, applied]);
  useEffect(() => { setRows(undefined); void load(null); }, [load]);
  const filtered = Boolean(kind) || Boolean(applied);
  return (
    <Page title="Bounces" description="Refusals, delivery reports and complaints that came back, with the receiving server's codes.">
      <form class="ix-filters" role="search" aria-label="Filter bounces" onSubmit={(e) => { e.preventDefault(); setApplied(recipient.trim()); }}>
        <Field label="Type" name="type">
          {(control) => (
            <select {...control} value={kind} onChange={(e) => setKind(e.currentTarget.value as Kind | '')}>
              <option value="">Every type</option>
              {KINDS.map((k) => <option value={k.value}>{k.label}: {k.hint}</option>)}
            </select>
          )}
        </Field>
        <Field label="Recipient" name="recipient" type="search" value={recipient} error={fieldError} placeholder="ann@example.org"
          onInput={(e) => setRecipient(e.currentTarget.value)} />
        <Button type="submit">Filter</Button>
      </form>
      <FormError message={error} />
      <Table
        caption="Bounces and complaints"
        rows={rows}
        rowKey={(b) => b.id}
        columns={[
          { label: 'Recipient', cell: (b) => (b.email_id ? <Link href={`/emails/${b.email_id}`} class="ix-mono">{b.recipient}</Link> : <span class="ix-mono" title="the email was purged">{b.recipient}</span>) },
          { label: 'Type', cell: (b) => <span class={`ix-badge${b.type === 'soft' ? ' ix-badge-warn' : ' ix-badge-bad'}`}>{KINDS.find((k) => k.value === b.type)?.label ?? b.type}</span> },
          { label: 'SMTP code', class: 'num', cell: (b) => b.smtp_code ?? <span class="ix-muted">—</span> },
          { label: 'Status', cell: (b) => (b.status ? <code>{b.status}</code> : b.feedback_type ? <span>feedback: {b.feedback_type}</span> : <span class="ix-muted">—</span>) },
          { label: 'Diagnostic', class: 'ix-diagnostic', cell: (b) => (b.diagnostic ? <span class="ix-mono">{b.diagnostic}</span> : <span class="ix-muted">—</span>) },
          { label: 'Source', cell: (b) => <>{b.source}{b.remote_mta ? <><br /><span class="ix-muted ix-mono">{b.remote_mta}</span></> : null}</> },
          { label: 'When', cell: (b) => new Date(b.created_at).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }) },
        ]}
        empty={filtered
          ? { title: 'No bounce matches', children: <p>Try another type or recipient.</p> }
          : { title: 'No bounces', children: <p>When a receiving server refuses a message or reports it undeliverable, or a recipient complains, it shows here with the server's codes. <Link href="/emails">See the email log</Link></p> }}
        footer={next && <Button onClick={() => void load(next)}>Load more</Button>}
      />
    </Page>
  );
}
