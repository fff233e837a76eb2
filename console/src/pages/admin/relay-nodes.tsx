// The relay nodes of every project (GET /api/v1/admin/relay-nodes): version,
// last heartbeat and address, spool depth and dead letters, optionally one
// project's. A node's dead letters open in a dialog
// (GET /api/v1/admin/relay-nodes/{id}/dead-letters): what its heartbeat
// reported; the messages themselves stay on the node's disk, read there with
// `edgemail relay dead-letters` (docs/console-ui.md "Platform admin").
import { useCallback, useEffect, useState } from 'preact/hooks';
import type { ApiSchemas } from '../../api/client';
import { messageOf, ok } from '../../api/errors';
import { Button, Dialog, Field, FormError, Table } from '../../ui';
import { when } from '../account/tabs';
import { useAdmin } from './client';

type Node = ApiSchemas['AdminRelayNode'];
type DeadLetters = ApiSchemas['RelayNodeDeadLetters'];

const STALE_MS = 2 * 60_000;
const PAGE = 100;
const kilobytes = (bytes: number) => `${Math.ceil(bytes / 1024)} kB`;

export function RelayNodes() {
  const admin = useAdmin();
  const [projectId, setProjectId] = useState('');
  const [page, setPage] = useState<{ nodes: Node[]; total: number; offset: number } | undefined>();
  const [error, setError] = useState<string>();
  const [dead, setDead] = useState<DeadLetters | undefined>();
  const [deadError, setDeadError] = useState<string>();
  const load = useCallback(async (offset = 0) => {
    setError(undefined);
    setPage(undefined);
    try {
      const wanted = projectId.trim();
      const r = await ok(admin.GET('/api/v1/admin/relay-nodes', { params: { query: { limit: PAGE, offset, ...(wanted ? { project_id: wanted } : {}) } } }));
      setPage({ nodes: r.relay_nodes, total: r.total, offset: r.offset });
    } catch (e) { setError(messageOf(e)); setPage({ nodes: [], total: 0, offset: 0 }); }
  }, [admin, projectId]);
  useEffect(() => { void load(); }, [admin]);
  const openDead = async (node: Node) => {
    setDeadError(undefined);
    try { setDead(await ok(admin.GET('/api/v1/admin/relay-nodes/{id}/dead-letters', { params: { path: { id: node.id } } }))); } catch (e) { setDeadError(messageOf(e)); }
  };
  const shownTo = page ? page.offset + page.nodes.length : 0;
  return (
    <>
      <form class="inline-form" onSubmit={(e) => { e.preventDefault(); void load(); }}>
        <Field label="Project id" name="project_id" value={projectId} onInput={(e) => setProjectId(e.currentTarget.value)} error={error} hint="Empty: the nodes of every project." />
        <Button type="submit">Show nodes</Button>
      </form>
      <FormError message={deadError} />
      <Table
        caption="Relay nodes"
        rows={page?.nodes}
        rowKey={(n) => n.id}
        columns={[
          { label: 'Node', cell: (n) => <span><strong>{n.name}</strong><br /><span class="muted">{n.key_prefix}</span></span> },
          { label: 'Project', cell: (n) => <span>{n.project_name}{n.installation_wide && <><br /><span class="badge">Installation-wide</span></>}</span> },
          { label: 'Heartbeat', cell: (n) => {
            if (n.revoked) return <span class="badge">Revoked</span>;
            if (!n.last_heartbeat_at) return <span class="badge badge-warn">Never</span>;
            const fresh = Date.now() - Date.parse(n.last_heartbeat_at) < STALE_MS;
            return <span><span class={`badge ${fresh ? 'badge-ok' : 'badge-warn'}`}>{fresh ? 'Up' : 'Silent'}</span> {when(n.last_heartbeat_at)}</span>;
          } },
          { label: 'Version', cell: (n) => n.version ?? '—' },
          { label: 'Address', cell: (n) => n.last_address ?? '—' },
          { label: 'Spool', class: 'num', cell: (n) => n.spool_depth },
          { label: 'Dead letters', class: 'num', cell: (n) => (
            <Button variant="ghost" onClick={() => void openDead(n)}>
              {n.dead_letters ? <span class="badge badge-warn">{n.dead_letters} ({kilobytes(n.dead_letter_bytes)})</span> : '0'}
              <span class="visually-hidden"> dead letters of {n.name}</span>
            </Button>
          ) },
        ]}
        empty={{ title: projectId.trim() ? 'No relay nodes in this project' : 'No relay nodes yet', children: <p>Enroll one with <code>edgemail relay enroll</code> (docs/operations.md).</p> }}
        footer={page && page.total > PAGE && (
          <span class="row-actions">
            <span class="muted">{page.offset + 1}–{shownTo} of {page.total}</span>
            <Button variant="ghost" disabled={page.offset === 0} onClick={() => void load(Math.max(0, page.offset - PAGE))}>Previous</Button>
            <Button variant="ghost" disabled={shownTo >= page.total} onClick={() => void load(page.offset + PAGE)}>Next</Button>
          </span>
        )}
      />
      <Dialog open={!!dead} title={`Dead letters of ${dead?.relay_node_name ?? ''}`} onClose={() => setDead(undefined)}
        actions={<Button variant="primary" onClick={() => setDead(undefined)}>Close</Button>}>
        {dead && (
          <>
            <p>
              <strong>{dead.count}</strong> message{dead.count === 1 ? '' : 's'} ({kilobytes(dead.bytes)}) in the node's <code>dead/</code> folder
              {dead.reported_at ? <>, as its heartbeat of {when(dead.reported_at)} reported.</> : <>: the node has not sent a heartbeat yet.</>}
            </p>
            <p class="muted">
              The edge refused these for good and the node will not send them again. The messages and their reasons stay on the
              node's disk; read them there with <code>edgemail relay dead-letters --state-dir &lt;dir&gt;</code> (project {dead.project_name}).
            </p>
          </>
        )}
      </Dialog>
    </>
  );
}
