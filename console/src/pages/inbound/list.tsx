// Inbound mail, newest first, a page at a time, live: new mail appears on
// top as the stream announces it, with its SPF/DKIM/DMARC verdicts.
import { useCallback, useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { api, type ApiSchemas } from '../../api/client';
import { ok } from '../../api/errors';
import { useLiveEvents } from '../../live';
import { Button, Field, FormError, Page, Table } from '../../ui';
import { when } from '../emails/format';
import { useKeyset, type Cursor } from '../emails/keyset';
import { StatusBadge } from '../emails/status-badge';
import { AuthVerdicts } from './verdicts';
import '../emails/mail.css';

type Inbound = ApiSchemas['InboundEmail'];
type Status = Inbound['status'];

export default function InboundList() {
  const [status, setStatus] = useState<Status | ''>('');
  const read = useCallback(async (cursor: Cursor | null) => {
    const data = await ok(api.GET('/api/v1/inbound-emails', { params: { query: { limit: 50, ...(status ? { status } : {}), ...(cursor ?? {}) } } }));
    return { rows: data.inbound_emails, next: data.next };
  }, [status]);
  const list = useKeyset<Inbound>(read, [status]);
  useLiveEvents(['inbound.received'], (e) => {
    const id = (e.data as { id?: string }).id;
    if (!id) return;
    void api.GET('/api/v1/inbound-emails/{id}', { params: { path: { id } } }).then(({ data }) => {
      if (data && (!status || data.inbound_email.status === status)) list.upsert(data.inbound_email, true);
    });
  }, () => void list.reload());
  return (
    <Page title="Inbound" description="Mail received for your domains, with the sender's authentication results.">
      <div class="filters">
        <Field label="Status" name="status">
          {(c) => (
            <select {...c} value={status} onChange={(e) => setStatus(e.currentTarget.value as Status | '')}>
              <option value="">Any</option>
              <option value="received">received</option>
              <option value="rejected">rejected</option>
              <option value="failed">failed</option>
            </select>
          )}
        </Field>
      </div>
      <FormError message={list.error} />
      <Table caption="Inbound mail" rows={list.rows} rowKey={(m) => m.id}
        empty={{ title: 'No inbound mail yet', children: <p>Point a domain's MX record at your relay nodes (its page in <Link href="/domains">Domains</Link> shows it); mail for it appears here as it arrives.</p> }}
        columns={[
          { label: 'Subject', cell: (m) => <Link href={`/inbound/${m.id}`}>{m.subject || '(no subject)'}</Link> },
          { label: 'From', cell: (m) => m.sender },
          { label: 'To', cell: (m) => m.recipients.join(', ') },
          { label: 'Authentication', cell: (m) => <AuthVerdicts auth={m.auth} /> },
          { label: 'Status', cell: (m) => <StatusBadge status={m.status} /> },
          { label: 'Received', cell: (m) => <time dateTime={m.received_at}>{when(m.received_at)}</time> },
        ]}
        footer={list.more ? <Button onClick={() => void list.loadMore()} busy={list.loadingMore}>Load more</Button> : undefined} />
    </Page>
  );
}
