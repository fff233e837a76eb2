// A project's relay nodes: version, last heartbeat and address, spool depth
// and dead letters (messages the node gave up on, kept on its disk for
// `edgemail-relay dead-letters`). The route is a project's, so the project is
// named by header (a platform credential acts as owner in the project it names).
import { useCallback, useEffect, useState } from 'preact/hooks';
import type { ApiSchemas } from '../../api/client';
import { messageOf, ok } from '../../api/errors';
import { useSignedIn } from '../../session';
import { Button, Field, FormError, Table } from '../../ui';
import { when } from '../account/tabs';
import { useAdmin } from './client';

type Node = ApiSchemas['RelayNode'];

const STALE_MS = 2 * 60_000;

export function RelayNodes() {
  const admin = useAdmin();
  const { me } = useSignedIn();
  const [projectId, setProjectId] = useState(me.session.current_project_id ?? '');
  const [rows, setRows] = useState<Node[] | undefined>();
  const [error, setError] = useState<string>();
  const load = useCallback(async () => {
    if (!projectId.trim()) { setRows([]); return; }
    setError(undefined);
    setRows(undefined);
    try {
      setRows((await ok(admin.GET('/api/v1/relay/nodes', { headers: { 'x-service-project-id': projectId.trim() } }))).relay_nodes);
    } catch (e) { setError(messageOf(e)); setRows([]); }
  }, [admin, projectId]);
  useEffect(() => { void load(); }, []);
  return (
    <>
      <form class="inline-form" onSubmit={(e) => { e.preventDefault(); void load(); }}>
        <Field label="Project id" name="project_id" value={projectId} onInput={(e) => setProjectId(e.currentTarget.value)} error={error} hint="Relay nodes are enrolled in a project." />
        <Button type="submit">Show nodes</Button>
      </form>
      <Table
        caption="Relay nodes"
        rows={rows}
        rowKey={(n) => n.id}
        columns={[
          { label: 'Node', cell: (n) => <span><strong>{n.name}</strong><br /><span class="muted">{n.key_prefix}</span></span> },
          { label: 'Heartbeat', cell: (n) => {
            if (n.revoked) return <span class="badge">Revoked</span>;
            if (!n.last_heartbeat_at) return <span class="badge badge-warn">Never</span>;
            const fresh = Date.now() - Date.parse(n.last_heartbeat_at) < STALE_MS;
            return <span><span class={`badge ${fresh ? 'badge-ok' : 'badge-warn'}`}>{fresh ? 'Up' : 'Silent'}</span> {when(n.last_heartbeat_at)}</span>;
          } },
          { label: 'Version', cell: (n) => n.version ?? '—' },
          { label: 'Address', cell: (n) => n.last_address ?? '—' },
          { label: 'Spool', class: 'num', cell: (n) => n.spool_depth },
          { label: 'Dead letters', class: 'num', cell: (n) => (n.dead_letters ? <span class="badge badge-warn">{n.dead_letters} ({Math.ceil(n.dead_letter_bytes / 1024)} kB)</span> : '0') },
        ]}
        empty={{ title: 'No relay nodes in this project', children: <p>Enroll one with <code>edgemail-relay enroll</code> (docs/operations.md).</p> }}
      />
    </>
  );
}
