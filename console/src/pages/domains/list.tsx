// Sending domains: add one (then its page shows the records to publish),
// see where each stands.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { Link, useLocation } from 'wouter-preact';
import { api, type ApiSchemas } from '../../api/client';
import { messageOf, ok } from '../../api/errors';
import { useSubmit } from '../../api/use-submit';
import { Button, Field, FormError, Page, Table } from '../../ui';
import { when } from '../emails/format';
import { StatusBadge } from '../emails/status-badge';
import '../emails/mail.css';

type Domain = ApiSchemas['Domain'];

export default function DomainsPage() {
  const [, navigate] = useLocation();
  const [domains, setDomains] = useState<Domain[] | undefined>(undefined);
  const [error, setError] = useState<string | undefined>();
  const [name, setName] = useState('');
  const [algorithm, setAlgorithm] = useState<'rsa' | 'ed25519'>('rsa');
  const load = useCallback(async () => {
    try { setDomains((await ok(api.GET('/api/v1/domains'))).domains); } catch (e) { setError(messageOf(e)); setDomains([]); }
  }, []);
  useEffect(() => { void load(); }, [load]);
  const add = useSubmit(async () => {
    const { domain } = await ok(api.POST('/api/v1/domains', { body: { name: name.trim(), dkim_algorithm: algorithm } }));
    navigate(`/domains/${domain.id}`);
  }, ['name', 'dkim_algorithm']);
  return (
    <Page title="Domains" description="The domains you send from: publish their DNS records, then verify.">
      <form class="filters" aria-label="Add a domain" onSubmit={(e) => { e.preventDefault(); void add.run(); }}>
        <Field label="Domain" name="name" required placeholder="acme.example" value={name} onInput={(e) => setName(e.currentTarget.value)} error={add.fields.name} />
        <Field label="DKIM key" name="dkim_algorithm" error={add.fields.dkim_algorithm}>
          {(control) => (
            <select {...control} value={algorithm} onChange={(e) => setAlgorithm(e.currentTarget.value as 'rsa' | 'ed25519')}>
              <option value="rsa">RSA 2048 (every receiver checks it)</option>
              <option value="ed25519">Ed25519 (smaller; not every receiver)</option>
            </select>
          )}
        </Field>
        <Button variant="primary" type="submit" busy={add.busy}>Add domain</Button>
      </form>
      <FormError message={add.error ?? error} />
      <Table caption="Domains" rows={domains} rowKey={(d) => d.id}
        empty={{ title: 'No domain yet', children: <p>Add the domain you send from above; its page lists the DNS records to publish.</p> }}
        columns={[
          { label: 'Domain', cell: (d) => <Link href={`/domains/${d.id}`}>{d.name}</Link> },
          { label: 'Status', cell: (d) => <StatusBadge status={d.status} /> },
          { label: 'Ownership', cell: (d) => d.ownership_proven_at ? 'proven' : 'not yet' },
          { label: 'DKIM', cell: (d) => d.dkim ? <code>{d.dkim.selector} ({d.dkim.algorithm})</code> : '—' },
          { label: 'Last checked', cell: (d) => when(d.last_checked_at) },
        ]} />
    </Page>
  );
}
