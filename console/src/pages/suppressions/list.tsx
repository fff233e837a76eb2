// Suppressions in address order, a page at a time (`next.after`), filtered by
// reason and whether expired entries show; add one, remove one. An entry the
// service added from a bounce or complaint links to the email it came from.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { api, type ApiSchemas } from '../../api/client';
import { messageOf, ok } from '../../api/errors';
import { useSubmit } from '../../api/use-submit';
import { Button, Dialog, Field, FormError, Page, Table, useToast } from '../../ui';
import '../analytics/insights.css';

type Suppression = ApiSchemas['Suppression'];
type Reason = Suppression['reason'];
const REASONS: { value: Reason; label: string }[] = [
  { value: 'manual', label: 'Manual' },
  { value: 'unsubscribe', label: 'Unsubscribe' },
  { value: 'hard_bounce', label: 'Hard bounce' },
  { value: 'complaint', label: 'Complaint' },
];
const reasonLabel = (r: Reason) => REASONS.find((x) => x.value === r)?.label ?? r;
const PAGE = 50;

export default function SuppressionList() {
  const toast = useToast();
  const [reason, setReason] = useState<Reason | ''>('');
  const [expired, setExpired] = useState(false);
  const [rows, setRows] = useState<Suppression[] | undefined>();
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<string>();
  const [adding, setAdding] = useState(false);
  const [removing, setRemoving] = useState<Suppression | undefined>();
  const load = useCallback(async (after: string | null) => {
    setError(undefined);
    try {
      const data = await ok(api.GET('/api/v1/suppressions', {
        params: { query: { limit: PAGE, include_expired: expired, ...(reason ? { reason } : {}), ...(after ? { after } : {}) } },
      }));
      setRows((r) => (after ? [...(r ?? []), ...data.suppressions] : data.suppressions));
      setNext(data.next?.after ?? null);
    } catch (e) {
      setError(messageOf(e));
      setRows((r) => r ?? []);
    }
  }, [reason, expired]);
  useEffect(() => { setRows(undefined); void load(null); }, [load]);
  const remove = useSubmit(async (s: Suppression) => {
    await ok(api.DELETE('/api/v1/suppressions/{id}', { params: { path: { id: s.id } } }));
    setRows((r) => r?.filter((x) => x.id !== s.id));
    setRemoving(undefined);
    toast(`${s.address} removed: mail to it goes out again`);
  });
  const filtered = Boolean(reason) || expired;
  return (
    <Page
      title="Suppressions"
      description="Addresses this project does not send to (and whose mail it refuses). Hard bounces and complaints add themselves."
      actions={<Button variant="primary" onClick={() => setAdding(true)}>Add suppression</Button>}
    >
      <div class="ix-filters" role="search" aria-label="Filter suppressions">
        <Field label="Reason" name="reason">
          {(control) => (
            <select {...control} value={reason} onChange={(e) => setReason(e.currentTarget.value as Reason | '')}>
              <option value="">Every reason</option>
              {REASONS.map((r) => <option value={r.value}>{r.label}</option>)}
            </select>
          )}
        </Field>
        <label class="ix-check"><input type="checkbox" checked={expired} onChange={(e) => setExpired(e.currentTarget.checked)} /> Show expired entries</label>
      </div>
      <FormError message={error ?? remove.error} />
      <Table
        caption="Suppressed addresses"
        rows={rows}
        rowKey={(s) => s.id}
        columns={[
          { label: 'Address', cell: (s) => <span class="ix-mono">{s.address}</span> },
          { label: 'Reason', cell: (s) => <span class={`ix-badge${s.reason === 'hard_bounce' || s.reason === 'complaint' ? ' ix-badge-bad' : ''}`}>{reasonLabel(s.reason)}</span> },
          { label: 'Detail', cell: (s) => s.detail ?? <span class="ix-muted">—</span> },
          { label: 'From email', cell: (s) => (s.source_email_id ? <Link href={`/emails/${s.source_email_id}`}>Open the email</Link> : <span class="ix-muted">added by hand</span>) },
          { label: 'Expires', cell: (s) => (s.expires_at ? when(s.expires_at) : <span class="ix-muted">never</span>) },
          { label: 'Added', cell: (s) => when(s.created_at) },
          { label: 'Actions', cell: (s) => <Button variant="ghost" onClick={() => setRemoving(s)} aria-label={`Remove ${s.address}`}>Remove</Button> },
        ]}
        empty={filtered
          ? { title: 'No suppression matches', children: <p>Try another reason, or show expired entries.</p> }
          : { title: 'Nothing is suppressed', children: <p>Hard bounces and complaints will appear here by themselves. To stop mail to an address now, <Button variant="primary" onClick={() => setAdding(true)}>Add suppression</Button></p> }}
        footer={next && <Button onClick={() => void load(next)}>Load more</Button>}
      />
      <AddSuppression open={adding} onClose={() => setAdding(false)} onAdded={(s) => {
        setAdding(false);
        toast(`${s.address} suppressed`);
        void load(null);
      }} />
      <Dialog open={Boolean(removing)} title={`Remove ${removing?.address ?? ''}?`} onClose={() => setRemoving(undefined)}
        actions={<>
          <Button onClick={() => setRemoving(undefined)}>Cancel</Button>
          <Button variant="danger" busy={remove.busy} onClick={() => removing && void remove.run(removing)}>Remove suppression</Button>
        </>}>
        <p>From the next message on, sends reach {removing?.address} again and its mail is accepted.</p>
        <FormError message={remove.error} />
      </Dialog>
    </Page>
  );
}

function AddSuppression({ open, onClose, onAdded }: { open: boolean; onClose: () => void; onAdded: (s: Suppression) => void }) {
  const [address, setAddress] = useState('');
  const [reason, setReason] = useState<Reason>('manual');
  const [detail, setDetail] = useState('');
  const [expires, setExpires] = useState('');
  const submit = useSubmit(async () => {
    const { suppression } = await ok(api.POST('/api/v1/suppressions', {
      body: {
        address, reason,
        ...(detail.trim() ? { detail } : {}),
        // <input type="datetime-local"> gives local time without an offset; the API wants RFC 3339 with one.
        ...(expires ? { expires_at: new Date(expires).toISOString() } : {}),
      },
    }));
    setAddress(''); setDetail(''); setExpires('');
    onAdded(suppression);
  }, ['address', 'reason', 'detail', 'expires_at']);
  return (
    <Dialog open={open} title="Add a suppression" onClose={onClose}
      actions={<>
        <Button onClick={onClose}>Cancel</Button>
        <Button variant="primary" type="submit" form="add-suppression" busy={submit.busy}>Add suppression</Button>
      </>}>
      <form id="add-suppression" class="stack" onSubmit={(e) => { e.preventDefault(); void submit.run(); }}>
        <Field label="Address" name="address" value={address} required error={submit.fields.address}
          hint="ann@example.org or Ann <ann@example.org>" onInput={(e) => setAddress(e.currentTarget.value)} />
        <Field label="Reason" name="reason" error={submit.fields.reason}>
          {(control) => (
            <select {...control} value={reason} onChange={(e) => setReason(e.currentTarget.value as Reason)}>
              {REASONS.map((r) => <option value={r.value}>{r.label}</option>)}
            </select>
          )}
        </Field>
        <Field label="Detail" name="detail" value={detail} maxLength={200} error={submit.fields.detail}
          hint="Optional: why, for whoever reads this later" onInput={(e) => setDetail(e.currentTarget.value)} />
        <Field label="Expires" name="expires_at" type="datetime-local" value={expires} error={submit.fields.expires_at}
          hint="Optional: leave empty for an entry that never expires" onInput={(e) => setExpires(e.currentTarget.value)} />
        <FormError message={submit.error} />
      </form>
    </Dialog>
  );
}

function when(iso: string): string {
  return new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}
