// One webhook: its deliveries and their attempts (live as they run),
// redeliver one, rotate the signing secret (the new one shown once), delete;
// a webhook disabled for failing shows why and can be enabled again.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { Link, useLocation } from 'wouter-preact';
import { api, type ApiSchemas } from '../../api/client';
import { messageOf, ok } from '../../api/errors';
import { useSubmit } from '../../api/use-submit';
import { useLiveEvents } from '../../live';
import type { PageProps } from '../../routes';
import { Button, Dialog, FormError, Page, ShownOnce, Table, useToast } from '../../ui';
import { when } from '../emails/format';
import { useKeyset, type Cursor } from '../emails/keyset';
import { StatusBadge } from '../emails/status-badge';
import '../emails/mail.css';

type Webhook = ApiSchemas['Webhook'];
type Delivery = ApiSchemas['WebhookDelivery'];

export default function WebhookPage({ params }: PageProps<{ id: string }>) {
  const toast = useToast();
  const [, navigate] = useLocation();
  const [hook, setHook] = useState<Webhook | null | undefined>(undefined);
  const [error, setError] = useState<string | undefined>();
  const [secret, setSecret] = useState<string | null>(null);
  const [confirm, setConfirm] = useState<'rotate' | 'delete' | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  useEffect(() => {
    void ok(api.GET('/api/v1/webhooks')).then(({ webhooks }) => setHook(webhooks.find((w) => w.id === params.id) ?? null), (e) => { setError(messageOf(e)); setHook(null); });
  }, [params.id]);
  const read = useCallback(async (cursor: Cursor | null) => {
    const data = await ok(api.GET('/api/v1/webhooks/{id}/deliveries', { params: { path: { id: params.id }, query: { limit: 25, ...(cursor ?? {}) } } }));
    return { rows: data.deliveries, next: data.next };
  }, [params.id]);
  const deliveries = useKeyset<Delivery>(read, [params.id]);
  // Each attempt's result arrives as an event; the delivery is read again (the event carries no answer body).
  useLiveEvents(['webhook.delivery'], (e) => {
    const d = e.data as { webhook_id?: string };
    if (d.webhook_id === params.id) void deliveries.reload();
  }, () => void deliveries.reload());
  const rotate = useSubmit(async () => {
    const { webhook } = await ok(api.POST('/api/v1/webhooks/{id}/rotate-secret', { params: { path: { id: params.id } } }));
    setConfirm(null);
    setSecret(webhook.secret);
    setHook(webhook);
  });
  const remove = useSubmit(async () => {
    await ok(api.DELETE('/api/v1/webhooks/{id}', { params: { path: { id: params.id } } }));
    toast('Webhook deleted');
    navigate('/webhooks');
  });
  const enable = useSubmit(async () => {
    const { webhook } = await ok(api.POST('/api/v1/webhooks/{id}/enable', { params: { path: { id: params.id } } }));
    setHook(webhook);
    toast('Webhook enabled');
  });
  const redeliver = useSubmit(async (delivery: Delivery) => {
    await ok(api.POST('/api/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver', { params: { path: { id: params.id, deliveryId: delivery.id } } }));
    toast(`${delivery.event} queued for redelivery`);
    await deliveries.reload();
  });

  if (hook === undefined) return <p class="loading" role="status">Loading…</p>;
  if (hook === null) return <Page title="Webhook"><FormError message={error ?? 'webhook not found'} /><p><Link href="/webhooks">Back to webhooks</Link></p></Page>;
  return (
    <Page title="Webhook" description={<span class="mono">{hook.url}</span>}
      actions={<>
        {hook.status === 'disabled' && <Button variant="primary" busy={enable.busy} onClick={() => void enable.run()}>Enable</Button>}
        <Button onClick={() => setConfirm('rotate')}>Rotate secret</Button>
        <Button variant="danger" onClick={() => setConfirm('delete')}>Delete</Button>
      </>}>
      {secret && (
        <div class="section">
          <h2>New signing secret</h2>
          <ShownOnce label="Webhook signing secret" value={secret} onDone={() => setSecret(null)} />
        </div>
      )}
      {hook.status === 'disabled' && (
        <div class="notice" role="status">
          <p>Disabled {hook.disabled_at ? when(hook.disabled_at) : ''}: {hook.disabled_reason ?? 'every delivery attempt failed'}. No event is posted to it until it is enabled again; events of the meantime can be replayed (docs/webhooks.md).</p>
        </div>
      )}
      <FormError message={enable.error} />
      <dl class="facts">
        <dt>Status</dt><dd>{hook.status === 'disabled' ? 'disabled' : hook.consecutive_failures ? `enabled, ${hook.consecutive_failures} failed attempts since ${hook.failing_since ? when(hook.failing_since) : '?'}` : 'enabled'}</dd>
        <dt>Order</dt><dd>{hook.ordered ? 'events of one message in order' : 'as they come'}</dd>
        <dt>Events</dt><dd>{hook.events.join(', ')}</dd>
        <dt>Senders</dt><dd>{hook.filters.length ? hook.filters.join(', ') : 'every sender'}</dd>
        <dt>Created</dt><dd>{when(hook.created_at)}</dd>
        <dt>Secret rotated</dt><dd>{hook.secret_rotated_at ? when(hook.secret_rotated_at) : 'never'}</dd>
      </dl>
      <FormError message={redeliver.error ?? deliveries.error} />
      <section class="section" aria-labelledby="deliveries">
        <h2 id="deliveries">Deliveries</h2>
        <Table caption="Deliveries" rows={deliveries.rows} rowKey={(d) => d.id}
          empty={{ title: 'No delivery yet', children: <p>Each event this webhook takes is posted here: send a message from <Link href="/send">Send</Link> to see one.</p> }}
          columns={[
            { label: 'Event', cell: (d) => <>{d.event}{d.redelivery_of && <span class="notice-inline"> (redelivery)</span>}</> },
            { label: 'Status', cell: (d) => <StatusBadge status={d.status} /> },
            { label: 'Attempts', cell: (d) => d.attempts, class: 'num' },
            { label: 'Last answer', cell: (d) => <span class="mono">{d.last_status_code ?? ''} {d.last_error ?? ''}</span> },
            { label: 'Event time', cell: (d) => when(d.event_at) },
            {
              label: 'Actions', cell: (d) => (
                <span class="row-actions">
                  <Button variant="ghost" aria-expanded={open === d.id} aria-label={`Attempts of ${d.event} delivery ${d.id.slice(0, 8)}`} onClick={() => setOpen(open === d.id ? null : d.id)}>Attempts</Button>
                  <Button aria-label={`Redeliver ${d.event} delivery ${d.id.slice(0, 8)}`} disabled={d.status === 'pending'} onClick={() => void redeliver.run(d)}>Redeliver</Button>
                </span>
              ),
            },
          ]}
          footer={deliveries.more ? <Button onClick={() => void deliveries.loadMore()} busy={deliveries.loadingMore}>Load more</Button> : undefined} />
        {open && <Attempts delivery={deliveries.rows?.find((d) => d.id === open)} />}
      </section>
      <Dialog open={confirm !== null} title={confirm === 'rotate' ? 'Rotate the signing secret?' : 'Delete this webhook?'} onClose={() => setConfirm(null)}
        actions={<>
          <Button onClick={() => setConfirm(null)}>Cancel</Button>
          {confirm === 'rotate'
            ? <Button variant="primary" busy={rotate.busy} onClick={() => void rotate.run()}>Rotate secret</Button>
            : <Button variant="danger" busy={remove.busy} onClick={() => void remove.run()}>Delete webhook</Button>}
        </>}>
        <p>{confirm === 'rotate' ? 'Deliveries are signed with a new secret from now on; update your receiver with it.' : 'No event is posted to this URL any more.'}</p>
        <FormError message={confirm === 'rotate' ? rotate.error : remove.error} />
      </Dialog>
    </Page>
  );
}

function Attempts({ delivery }: { delivery: Delivery | undefined }) {
  if (!delivery) return null;
  return (
    <div class="section">
      <h3>Attempts of {delivery.event}</h3>
      <Table caption={`Attempts of delivery ${delivery.id}`} rows={delivery.attempt_log} rowKey={(a) => String(a.attempt)}
        empty={{ title: 'No attempt yet', children: <p>The first attempt runs shortly.</p> }}
        columns={[
          { label: '#', cell: (a) => a.attempt, class: 'num' },
          { label: 'Answer', cell: (a) => <span class="mono">{a.status_code ?? a.error ?? '—'}</span> },
          { label: 'Body', cell: (a) => <span class="mono">{a.response_excerpt || '—'}</span> },
          { label: 'Started', cell: (a) => when(a.started_at) },
          { label: 'Took', cell: (a) => `${a.duration_ms} ms`, class: 'num' },
        ]} />
      <details><summary>Payload data</summary><pre class="pre">{JSON.stringify(delivery.data, null, 2)}</pre></details>
    </div>
  );
}
