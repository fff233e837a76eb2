// The signed-in person's own security trail (GET /app/api/account/security-events):
// sign-ins and refused ones, sign-outs, two-factor, passkey, session and single
// sign-on changes. Newest first, paged by offset.
import { useEffect, useState } from 'preact/hooks';
import { app, type AppSchemas } from '../../api/client';
import { messageOf, ok } from '../../api/errors';
import { FormError, Page, Table } from '../../ui';
import { AuditTabs, PAGE, Pager, useOffset, when } from './paging';
import '../analytics/insights.css';

type SecurityEvent = AppSchemas['SecurityEvent'];

export default function MySecurityEvents() {
  const offset = useOffset();
  const [rows, setRows] = useState<SecurityEvent[] | undefined>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    setRows(undefined);
    void ok(app.GET('/app/api/account/security-events', { params: { query: { limit: PAGE, offset } } })).then(
      (d) => { setRows(d.events); setError(undefined); },
      (e) => { setError(messageOf(e)); setRows([]); },
    );
  }, [offset]);
  return (
    <Page title="Audit" description="Your own sign-ins and security changes, in every project. Something you do not recognise? Sign out your other sessions (Account) and change your password.">
      <AuditTabs current="security" />
      <FormError message={error} />
      <Table
        caption="My security events"
        rows={rows}
        rowKey={(e) => e.id}
        columns={[
          { label: 'When', cell: (e) => when(e.created_at) },
          { label: 'Event', cell: (e) => <span class={e.type.endsWith('.failed') || e.type.includes('locked') ? 'ix-badge ix-badge-bad' : undefined}><code>{e.type}</code></span> },
          { label: 'Detail', cell: (e) => e.detail ?? <span class="ix-muted">—</span> },
          { label: 'Client address', cell: (e) => (e.client_ip ? <span class="ix-mono">{e.client_ip}</span> : <span class="ix-muted">—</span>) },
          { label: 'Browser', cell: (e) => (e.user_agent ? <span class="ix-ua" title={e.user_agent}>{e.user_agent}</span> : <span class="ix-muted">—</span>) },
        ]}
        empty={offset
          ? { title: 'No older events', children: <p>This is past the oldest event.</p> }
          : { title: 'No security events yet', children: <p>Sign-ins, sign-outs and changes to your two-factor settings, passkeys and sessions are listed here.</p> }}
        footer={<Pager path="/audit/security" offset={offset} count={rows?.length ?? 0} />}
      />
    </Page>
  );
}
