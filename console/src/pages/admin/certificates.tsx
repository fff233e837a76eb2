// TLS certificates and which SMTP listener presents which: assign one to a
// listener, see what each relay node reports presenting and when it last
// called in.
import { useCallback, useEffect, useState } from 'preact/hooks';
import type { ApiSchemas } from '../../api/client';
import { messageOf, ok } from '../../api/errors';
import { useSubmit } from '../../api/use-submit';
import { Button, Field, FormError, Table, useToast } from '../../ui';
import { when } from '../account/tabs';
import { useAdmin } from './client';

type Certificate = ApiSchemas['Certificate'];
type Listener = ApiSchemas['Listener'];

function ListenerCard({ listener, certificates, onChanged }: { listener: Listener; certificates: Certificate[]; onChanged: () => Promise<void> }) {
  const admin = useAdmin();
  const toast = useToast();
  const leaves = certificates.filter((c) => !c.is_authority);
  const [choice, setChoice] = useState(listener.certificate?.name ?? leaves[0]?.name ?? '');
  const assign = useSubmit(async () => {
    await ok(admin.PUT('/api/v1/admin/listeners/{listener}/certificate', { params: { path: { listener: listener.name } }, body: { certificate: choice } }));
    toast(`${listener.name} presents ${choice}`);
    await onChanged();
  }, ['certificate']);
  const unassign = useSubmit(async () => {
    await ok(admin.DELETE('/api/v1/admin/listeners/{listener}/certificate', { params: { path: { listener: listener.name } } }));
    toast(`${listener.name} certificate unassigned`);
    await onChanged();
  });
  return (
    <section class="card" aria-labelledby={`listener-${listener.name}`}>
      <h2 id={`listener-${listener.name}`}>Listener: {listener.name}</h2>
      <p class="card-lead">TLS {listener.tls}; presents <strong>{listener.certificate ? `${listener.certificate.name} (${listener.certificate.hosts.join(', ')})` : listener.presents}</strong>; generation {listener.generation}.</p>
      {leaves.length > 0 ? (
        <form class="inline-form" onSubmit={(e) => { e.preventDefault(); void assign.run(); }}>
          <Field label={`Certificate for ${listener.name}`} name="certificate" error={assign.fields.certificate}>
            {(control) => <select {...control} value={choice} onChange={(e) => setChoice(e.currentTarget.value)}>{leaves.map((c) => <option value={c.name}>{c.name} ({c.hosts.join(', ')})</option>)}</select>}
          </Field>
          <Button type="submit" busy={assign.busy} disabled={!choice}>Assign</Button>
          {listener.certificate && <Button variant="ghost" busy={unassign.busy} onClick={() => void unassign.run()}>Unassign</Button>}
        </form>
      ) : <p class="muted">No certificate to assign yet: add one first (above).</p>}
      <FormError message={assign.error ?? unassign.error} />
      <Table caption={`Relay nodes serving ${listener.name}`} rows={listener.nodes} rowKey={(n) => n.node_id} columns={[
        { label: 'Node', cell: (n) => n.name },
        { label: 'Last heartbeat', cell: (n) => when(n.last_heartbeat_at) },
        { label: 'Generation', cell: (n) => (n.generation === listener.generation ? <span class="badge badge-ok">current</span> : <span class="badge badge-warn">{n.generation ?? 'none'}</span>) },
      ]} empty={{ title: 'No node reports this listener yet', children: <p>Nodes report on their next heartbeat.</p> }} />
    </section>
  );
}

export function Certificates() {
  const admin = useAdmin();
  const [certificates, setCertificates] = useState<Certificate[] | undefined>();
  const [listeners, setListeners] = useState<Listener[] | undefined>();
  const [loadError, setLoadError] = useState<string>();
  const load = useCallback(async () => {
    try {
      const [c, l] = await Promise.all([ok(admin.GET('/api/v1/admin/certificates')), ok(admin.GET('/api/v1/admin/listeners'))]);
      setCertificates(c.certificates);
      setListeners(l.listeners);
    } catch (e) { setLoadError(messageOf(e)); }
  }, [admin]);
  useEffect(() => { void load(); }, [load]);
  return (
    <>
      {loadError && <FormError message={loadError} />}
      <Table
        caption="Certificates"
        rows={loadError ? [] : certificates}
        rowKey={(c) => c.id}
        columns={[
          { label: 'Name', cell: (c) => <span><strong>{c.name}</strong><br /><span class="muted">{c.kind}{c.is_authority ? ' (authority)' : ''}</span></span> },
          { label: 'Hosts', cell: (c) => <span class="wrap-anywhere">{c.hosts.join(', ') || c.subject}</span> },
          { label: 'Expires', cell: (c) => when(c.not_after) },
          { label: 'Listeners', cell: (c) => c.assigned_listeners.join(', ') || '—' },
        ]}
        empty={{ title: 'No certificates', children: <p>Generate or upload one with <code>POST /api/v1/admin/certificates</code> (docs/tls.md), then assign it to a listener here.</p> }}
      />
      {(listeners ?? []).map((l) => <ListenerCard key={`${l.name}-${l.generation}`} listener={l} certificates={certificates ?? []} onChanged={load} />)}
    </>
  );
}
