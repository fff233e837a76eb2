// One domain: the DNS records to publish (each with copy buttons), verify,
// DKIM and ownership status, and its open/click tracking setting.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { Link, useLocation } from 'wouter-preact';
import { api, type ApiSchemas } from '../../api/client';
import { messageOf, ok } from '../../api/errors';
import { useSubmit } from '../../api/use-submit';
import type { PageProps } from '../../routes';
import { Button, CopyButton, Dialog, Field, FormError, Page, Table, useToast } from '../../ui';
import { when } from '../emails/format';
import { StatusBadge } from '../emails/status-badge';
import '../emails/mail.css';

type Domain = ApiSchemas['Domain'];
type Tracking = ApiSchemas['DomainTracking'];

export default function DomainPage({ params }: PageProps<{ id: string }>) {
  const toast = useToast();
  const [, navigate] = useLocation();
  const [domain, setDomain] = useState<Domain | null | undefined>(undefined);
  const [error, setError] = useState<string | undefined>();
  const [deleting, setDeleting] = useState(false);
  const load = useCallback(async () => {
    try { setDomain((await ok(api.GET('/api/v1/domains/{id}', { params: { path: { id: params.id } } }))).domain); } catch (e) { setError(messageOf(e)); setDomain(null); }
  }, [params.id]);
  useEffect(() => { void load(); }, [load]);
  const verify = useSubmit(async () => {
    const { domain: checked } = await ok(api.POST('/api/v1/domains/{id}/verify', { params: { path: { id: params.id } } }));
    setDomain(checked);
    toast(checked.status === 'verified' ? `${checked.name} is verified` : `${checked.name}: not verified yet`, checked.status === 'verified' ? 'success' : 'info');
  });
  const remove = useSubmit(async () => {
    await ok(api.DELETE('/api/v1/domains/{id}', { params: { path: { id: params.id } } }));
    toast('Domain deleted');
    navigate('/domains');
  });

  if (domain === undefined) return <p class="loading" role="status">Loading…</p>;
  if (domain === null) return <Page title="Domain"><FormError message={error} /><p><Link href="/domains">Back to domains</Link></p></Page>;
  return (
    <Page title={domain.name} description={<>Status: <StatusBadge status={domain.status} /></>}
      actions={<>
        <Button variant="primary" busy={verify.busy} onClick={() => void verify.run()}>Verify DNS records</Button>
        <Button variant="danger" onClick={() => setDeleting(true)}>Delete</Button>
      </>}>
      <FormError message={verify.error} />
      <dl class="facts">
        <dt>Status</dt><dd><StatusBadge status={domain.status} />{domain.status_reason && <> {domain.status_reason}</>}</dd>
        <dt>Verified since</dt><dd>{when(domain.verified_at)}</dd>
        <dt>Ownership</dt><dd>{domain.ownership_proven_at ? `proven ${when(domain.ownership_proven_at)} (mail for it is received)` : 'not proven yet: publish the DKIM record'}</dd>
        <dt>DKIM</dt><dd>{domain.dkim ? <code>{domain.dkim.selector} · {domain.dkim.algorithm}</code> : 'no key yet: verify once to make one'}</dd>
        <dt>Last checked</dt><dd>{when(domain.last_checked_at)}</dd>
      </dl>
      <section class="section" aria-labelledby="records">
        <h2 id="records">DNS records to publish</h2>
        <Table caption="DNS records" rows={domain.dns_records} rowKey={(r) => `${r.purpose}-${r.name}`}
          empty={{ title: 'No record yet', children: <p>Press “Verify DNS records” to make the signing key and its record.</p> }}
          columns={[
            { label: 'Purpose', cell: (r) => <>{r.purpose.toUpperCase()}{r.required ? '' : ' (optional)'}</> },
            { label: 'Type', cell: (r) => r.type },
            { label: 'Name', cell: (r) => <span class="record-value"><code>{r.name}</code><CopyButton value={r.name} what={`${r.purpose} record name`} /></span> },
            { label: 'Value', cell: (r) => <span class="record-value"><code>{r.value}</code><CopyButton value={r.value} what={`${r.purpose} record value`} /></span> },
            { label: 'Found', cell: (r) => <StatusBadge status={r.status} /> },
          ]} />
      </section>
      <TrackingSettings domainId={domain.id} domainName={domain.name} />
      <Dialog open={deleting} title={`Delete ${domain.name}?`} onClose={() => setDeleting(false)}
        actions={<><Button onClick={() => setDeleting(false)}>Cancel</Button><Button variant="danger" busy={remove.busy} onClick={() => void remove.run()}>Delete domain</Button></>}>
        <p>Mail from this domain can no longer be sent and its inbound mail is no longer accepted.</p>
        <FormError message={remove.error} />
      </Dialog>
    </Page>
  );
}

function TrackingSettings({ domainId, domainName }: { domainId: string; domainName: string }) {
  const toast = useToast();
  const [tracking, setTracking] = useState<Tracking | undefined>();
  const [opens, setOpens] = useState(false);
  const [clicks, setClicks] = useState(false);
  const [host, setHost] = useState('');
  const show = (t: Tracking) => { setTracking(t); setOpens(t.opens); setClicks(t.clicks); setHost(t.host ?? ''); };
  useEffect(() => {
    void api.GET('/api/v1/domains/{id}/tracking', { params: { path: { id: domainId } } }).then(({ data }) => data && show(data.tracking));
  }, [domainId]);
  const save = useSubmit(async () => {
    const { tracking: saved } = await ok(api.PUT('/api/v1/domains/{id}/tracking', { params: { path: { id: domainId } }, body: { opens, clicks, ...(host.trim() ? { host: host.trim() } : {}) } }));
    show(saved);
    toast('Tracking saved');
  }, ['opens', 'clicks', 'host']);
  if (!tracking) return null;
  return (
    <section class="section" aria-labelledby="tracking">
      <h2 id="tracking">Open and click tracking</h2>
      <form class="form-grid" onSubmit={(e) => { e.preventDefault(); void save.run(); }}>
        <label class="check"><input type="checkbox" checked={opens} onChange={(e) => setOpens(e.currentTarget.checked)} /> Track opens (a pixel appended to the HTML)</label>
        <label class="check"><input type="checkbox" checked={clicks} onChange={(e) => setClicks(e.currentTarget.checked)} /> Track clicks (links rewritten to the tracking host)</label>
        <Field label="Custom tracking host" name="host" placeholder={`links.${domainName}`} value={host} onInput={(e) => setHost(e.currentTarget.value)} error={save.fields.host}
          hint={tracking.cname ? <>Publish <code>{tracking.cname.name} CNAME {tracking.cname.value}</code> <CopyButton value={tracking.cname.value} what="CNAME value" /> {tracking.host_verified_at ? '(found)' : '(not found yet)'}</> : 'Empty: links point at the service’s own host.'} />
        <FormError message={save.error} />
        <div><Button type="submit" busy={save.busy}>Save tracking</Button></div>
      </form>
    </section>
  );
}
