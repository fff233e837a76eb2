// The project's audit log: every successful change made in it, by whom, newest
// first, paged by offset (GET /api/v1/audit-log; the route has no filters).
// Reading it needs the admin or owner role. The first page takes new entries
// from the event stream as they are written.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, type ApiSchemas } from '../../api/client';
import { ApiError, messageOf, ok } from '../../api/errors';
import { useLiveEvents } from '../../live';
import { useSignedIn } from '../../session';
import { EmptyState, FormError, Page, Table } from '../../ui';
import { AuditTabs, PAGE, Pager, useOffset, when } from './paging';
import '../analytics/insights.css';

type AuditEvent = ApiSchemas['AuditEvent'];

export default function ProjectAuditLog() {
  const { project } = useSignedIn();
  const offset = useOffset();
  const [rows, setRows] = useState<AuditEvent[] | undefined>();
  const [error, setError] = useState<string>();
  const [forbidden, setForbidden] = useState(false);
  const mayRead = project?.role === 'owner' || project?.role === 'admin';
  const load = useCallback(async () => {
    try {
      const data = await ok(api.GET('/api/v1/audit-log', { params: { query: { limit: PAGE, offset } } }));
      setRows(data.events);
      setError(undefined);
    } catch (e) {
      if (e instanceof ApiError && e.status === 403) setForbidden(true);
      else setError(messageOf(e));
      setRows([]);
    }
  }, [offset]);
  useEffect(() => { setRows(undefined); if (mayRead) void load(); }, [load, mayRead]);
  // Events are written just after the answer of the change: re-read the first page a moment later.
  const timer = useRef<ReturnType<typeof setTimeout>>();
  const fresh = () => {
    if (offset !== 0 || !mayRead) return;
    clearTimeout(timer.current);
    timer.current = setTimeout(() => void load(), 500);
  };
  useEffect(() => () => clearTimeout(timer.current), []);
  useLiveEvents(['audit'], fresh, fresh);

  return (
    <Page title="Audit" description="What changed in this project, who changed it, and from where.">
      <AuditTabs current="project" />
      {!mayRead || forbidden
        ? (
          <EmptyState title="The audit log needs the admin or owner role">
            <p>Your role in {project?.project_name ?? 'this project'} is {project?.role ?? 'unknown'}. Ask an owner for access, or see your own sign-ins and security changes under My security events.</p>
          </EmptyState>
        )
        : <>
          <FormError message={error} />
          <Table
            caption="Project audit log"
            rows={rows}
            rowKey={(e) => e.id}
            columns={[
              { label: 'When', cell: (e) => when(e.created_at) },
              { label: 'Event', cell: (e) => <code>{e.type}</code> },
              { label: 'Who', cell: (e) => e.actor_email ?? <span class="ix-muted">—</span> },
              { label: 'Request', cell: (e) => (e.method ? <span class="ix-mono">{e.method} {e.path}{e.status ? ` → ${e.status}` : ''}</span> : <span class="ix-muted">—</span>) },
              { label: 'Client address', cell: (e) => (e.client_ip ? <span class="ix-mono">{e.client_ip}</span> : <span class="ix-muted">—</span>) },
            ]}
            empty={offset
              ? { title: 'No older events', children: <p>This is past the oldest event.</p> }
              : { title: 'Nothing recorded yet', children: <p>Every change made in this project (a key created, a domain added, a template activated) is listed here with who made it.</p> }}
            footer={<Pager path="/audit" offset={offset} count={rows?.length ?? 0} />}
          />
        </>}
    </Page>
  );
}
