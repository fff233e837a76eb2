// Webhooks: create one with the event types and sender filters it takes
// (its signing secret shown once), see each, delete.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { Link, useLocation } from 'wouter-preact';
import { api, type ApiSchemas } from '../../api/client';
import { messageOf, ok } from '../../api/errors';
import { useSubmit } from '../../api/use-submit';
import { Button, Dialog, Field, FormError, Page, ShownOnce, Table } from '../../ui';
import { when } from '../emails/format';
import '../emails/mail.css';

type Webhook = ApiSchemas['Webhook'];
type EventType = ApiSchemas['CreateWebhook']['events'][number];
const EVENTS: EventType[] = ['email.sent', 'email.failed', 'email.bounced', 'email.complained', 'email.opened', 'email.clicked', 'inbound.received', 'webhook.disabled'];

export default function WebhooksPage() {
  const [, navigate] = useLocation();
  const [hooks, setHooks] = useState<Webhook[] | undefined>(undefined);
  const [error, setError] = useState<string | undefined>();
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<{ id: string; secret: string } | null>(null);
  const load = useCallback(async () => {
    try { setHooks((await ok(api.GET('/api/v1/webhooks'))).webhooks); } catch (e) { setError(messageOf(e)); setHooks([]); }
  }, []);
  useEffect(() => { void load(); }, [load]);
  return (
    <Page title="Webhooks" description="Where the service posts your project's events, signed with the webhook's secret."
      actions={<Button variant="primary" onClick={() => setCreating(true)}>Add webhook</Button>}>
      {created && (
        <div class="section">
          <h2>Signing secret</h2>
          <ShownOnce label="Webhook signing secret" value={created.secret} onDone={() => { const id = created.id; setCreated(null); navigate(`/webhook/${id}`); }} />
        </div>
      )}
      <FormError message={error} />
      <Table caption="Webhooks" rows={hooks} rowKey={(h) => h.id}
        empty={{ title: 'No webhook yet', children: <p>Add one to have sent, failed, bounced or inbound mail posted to your URL.</p> }}
        columns={[
          { label: 'URL', cell: (h) => <Link href={`/webhook/${h.id}`} class="mono">{h.url}</Link> },
          { label: 'Events', cell: (h) => h.events.join(', ') },
          { label: 'Senders', cell: (h) => h.filters.length ? h.filters.join(', ') : 'every sender' },
          { label: 'Status', cell: (h) => h.status },
          { label: 'Created', cell: (h) => when(h.created_at) },
        ]} />
      <CreateWebhook open={creating} onClose={() => setCreating(false)}
        onCreated={(id, secret) => { setCreating(false); setCreated({ id, secret }); void load(); }} />
    </Page>
  );
}

function CreateWebhook({ open, onClose, onCreated }: { open: boolean; onClose: () => void; onCreated: (id: string, secret: string) => void }) {
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<Set<EventType>>(new Set(['email.sent', 'email.failed']));
  const [every, setEvery] = useState(false);
  const [filters, setFilters] = useState('');
  useEffect(() => { if (open) { setUrl(''); setEvents(new Set(['email.sent', 'email.failed'])); setEvery(false); setFilters(''); } }, [open]);
  const submit = useSubmit(async () => {
    const senderFilters = filters.split(/[,\n]/).map((f) => f.trim()).filter(Boolean);
    const { webhook } = await ok(api.POST('/api/v1/webhooks', { body: { url: url.trim(), events: every ? ['*'] : [...events], filters: senderFilters } }));
    onCreated(webhook.id, webhook.secret);
  }, ['url', 'events', 'filters']);
  const toggle = (e: EventType) => setEvents((s) => { const n = new Set(s); if (n.has(e)) n.delete(e); else n.add(e); return n; });
  const fieldOf = (name: string) => submit.fields[name] ?? Object.entries(submit.fields).find(([k]) => k.startsWith(`${name}.`))?.[1];
  return (
    <Dialog open={open} title="Add a webhook" onClose={onClose}
      actions={<><Button onClick={onClose}>Cancel</Button><Button variant="primary" type="submit" form="create-webhook" busy={submit.busy}>Add webhook</Button></>}>
      <form id="create-webhook" class="stack" onSubmit={(e) => { e.preventDefault(); void submit.run(); }}>
        <Field label="URL" name="url" type="url" required placeholder="https://hooks.example.org/edgemail" value={url} onInput={(e) => setUrl(e.currentTarget.value)} error={fieldOf('url')} />
        <label class="check"><input type="checkbox" checked={every} onChange={(e) => setEvery(e.currentTarget.checked)} /> Every event type (also those added later)</label>
        {!every && (
          <fieldset class="checks">
            <legend>Event types</legend>
            {EVENTS.map((e) => <label class="check" key={e}><input type="checkbox" name="events" value={e} checked={events.has(e)} onChange={() => toggle(e)} /> {e}</label>)}
          </fieldset>
        )}
        {fieldOf('events') && <p class="field-error">{fieldOf('events')}</p>}
        <Field label="Sender filters" name="filters" placeholder="billing@example.org, *@example.com" value={filters} onInput={(e) => setFilters(e.currentTarget.value)} error={fieldOf('filters')}
          hint="Only events of these senders: exact addresses or *@domain, separated by commas. Empty: every sender." />
        <FormError message={submit.error} />
      </form>
    </Dialog>
  );
}
