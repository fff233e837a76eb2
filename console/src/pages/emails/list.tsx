// The email log: newest first, a page at a time (keyset cursor), live: a
// status change from the event stream moves its row in place, and a new
// email (sent from this tab, or its first event) appears on top without a reload.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { api, type ApiSchemas } from '../../api/client';
import { ok } from '../../api/errors';
import { useLiveEvents } from '../../live';
import { Button, Field, FormError, Page, Table, type Column } from '../../ui';
import { when } from './format';
import { useKeyset, type Cursor } from './keyset';
import { onLocalSend } from './local-sends';
import { StatusBadge } from './status-badge';
import './mail.css';

type Email = ApiSchemas['Email'];
type Status = Email['status'];
const STATUSES: Status[] = ['queued', 'sending', 'sent', 'failed', 'suppressed', 'captured', 'bounced', 'complained', 'canceled'];
const PAGE = 50;

const columns: Column<Email>[] = [
  { label: 'Recipient', cell: (e) => <Link href={`/emails/${e.id}`}>{e.recipient}</Link> },
  { label: 'Subject', cell: (e) => e.subject || <span class="notice-inline">(no subject)</span> },
  { label: 'Status', cell: (e) => <StatusBadge status={e.status} /> },
  { label: 'From', cell: (e) => e.from },
  { label: 'Created', cell: (e) => <time dateTime={e.created_at} title={e.created_at}>{when(e.created_at)}</time> },
];

export default function EmailLog() {
  const [status, setStatus] = useState<Status | ''>('');
  const [recipient, setRecipient] = useState('');
  const [applied, setApplied] = useState('');
  const read = useCallback(async (cursor: Cursor | null) => {
    const data = await ok(api.GET('/api/v1/emails', {
      params: { query: { limit: PAGE, ...(status ? { status } : {}), ...(applied ? { recipient: applied } : {}), ...(cursor ?? {}) } },
    }));
    return { rows: data.emails, next: data.next };
  }, [status, applied]);
  const list = useKeyset<Email>(read, [status, applied]);
  const matches = (e: Email) => (!status || e.status === status) && (!applied || e.recipient === applied.toLowerCase());

  // A row not shown yet is read once (the event carries only part of it) and put on top if it fits the filters.
  const addById = useCallback(async (id: string) => {
    const { data } = await api.GET('/api/v1/emails/{id}', { params: { path: { id } } });
    if (data && matches(data.email)) list.upsert(data.email, true);
  }, [list.upsert, status, applied]);

  useLiveEvents(['email.status'], (event) => {
    const d = event.data as { id?: string; status?: Status; attempts?: number; error_message?: string };
    if (!d.id) return;
    const shown = list.rows?.find((r) => r.id === d.id);
    // A shown row moves in place (the event names the status after it); another is read and put on top.
    if (shown) list.upsert({ ...shown, ...(d.status ? { status: d.status } : {}), ...(d.attempts !== undefined ? { attempts: d.attempts } : {}), ...(d.error_message ? { error_message: d.error_message } : {}) }, false);
    else void addById(d.id);
  }, () => void list.reload());

  useEffect(() => onLocalSend((ids) => { for (const id of ids) void addById(id); }), [addById]);

  return (
    <Page title="Emails" description="Every message the project sent, newest first; statuses move here as they happen.">
      <form class="filters" role="search" aria-label="Filter the email log" onSubmit={(e) => { e.preventDefault(); setApplied(recipient.trim()); }}>
        <Field label="Status" name="status">
          {(control) => (
            <select {...control} value={status} onChange={(e) => setStatus(e.currentTarget.value as Status | '')}>
              <option value="">Any</option>
              {STATUSES.map((s) => <option value={s}>{s}</option>)}
            </select>
          )}
        </Field>
        <Field label="Recipient" name="recipient" type="email" placeholder="ann@example.org" value={recipient} onInput={(e) => setRecipient(e.currentTarget.value)} />
        <Button type="submit">Filter</Button>
        {(applied || status) && <Button variant="ghost" onClick={() => { setStatus(''); setRecipient(''); setApplied(''); }}>Clear</Button>}
      </form>
      <FormError message={list.error} />
      <Table
        caption="Emails"
        columns={columns}
        rows={list.rows}
        rowKey={(e) => e.id}
        empty={status || applied
          ? { title: 'No email matches', children: <p>Try another status or recipient, or clear the filters.</p> }
          : { title: 'No email yet', children: <p>Send one from <Link href="/send">Send</Link> or with <code>POST /api/v1/emails/send</code>: it shows up here as it moves.</p> }}
        footer={list.more ? <Button onClick={() => void list.loadMore()} busy={list.loadingMore}>Load more</Button> : undefined}
      />
    </Page>
  );
}
