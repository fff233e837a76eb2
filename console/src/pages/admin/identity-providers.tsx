// The OpenID Connect providers people sign in through: turn one on or off,
// delete one. (Adding one takes its client secret: docs/sso.md has the call.)
import { useCallback, useEffect, useState } from 'preact/hooks';
import type { ApiSchemas } from '../../api/client';
import { messageOf, ok } from '../../api/errors';
import { useSubmit } from '../../api/use-submit';
import { Button, FormError, Table, useToast } from '../../ui';
import { useAdmin } from './client';

type Provider = ApiSchemas['IdentityProvider'];

export function IdentityProviders() {
  const admin = useAdmin();
  const toast = useToast();
  const [rows, setRows] = useState<Provider[] | undefined>();
  const [loadError, setLoadError] = useState<string>();
  const load = useCallback(async () => {
    try { setRows((await ok(admin.GET('/api/v1/admin/identity-providers'))).identity_providers); } catch (e) { setLoadError(messageOf(e)); }
  }, [admin]);
  useEffect(() => { void load(); }, [load]);
  const toggle = useSubmit(async (p: Provider) => {
    await ok(admin.PATCH('/api/v1/admin/identity-providers/{id}', { params: { path: { id: p.id } }, body: { enabled: !p.enabled } }));
    toast(`${p.name} ${p.enabled ? 'turned off' : 'turned on'}`);
    await load();
  });
  const remove = useSubmit(async (p: Provider) => {
    await ok(admin.DELETE('/api/v1/admin/identity-providers/{id}', { params: { path: { id: p.id } } }));
    toast(`${p.name} deleted`);
    await load();
  });
  return (
    <>
      {loadError && <FormError message={loadError} />}
      <Table
        caption="Identity providers"
        rows={loadError ? [] : rows}
        rowKey={(p) => p.id}
        columns={[
          { label: 'Provider', cell: (p) => <span><strong>{p.name}</strong><br /><span class="muted wrap-anywhere">{p.issuer}</span></span> },
          { label: 'Status', cell: (p) => (p.enabled ? <span class="badge badge-ok">On</span> : <span class="badge">Off</span>) },
          { label: 'Domains', cell: (p) => p.allowed_domains.join(', ') || 'any' },
          { label: 'New members', cell: (p) => (p.default_project_id ? `${p.default_role} of ${p.default_project_id}` : 'no project') },
          { label: 'Redirect URI', cell: (p) => <code class="wrap-anywhere">{p.redirect_uri}</code> },
          { label: 'Actions', class: 'actions', cell: (p) => (
            <div class="row-actions">
              <Button variant="ghost" aria-label={`${p.enabled ? 'Turn off' : 'Turn on'} ${p.name}`} onClick={() => void toggle.run(p)}>{p.enabled ? 'Turn off' : 'Turn on'}</Button>
              <Button variant="ghost" aria-label={`Delete ${p.name}`} onClick={() => void remove.run(p)}>Delete</Button>
            </div>
          ) },
        ]}
        empty={{ title: 'No identity providers', children: <p>Add one with <code>POST /api/v1/admin/identity-providers</code> (docs/sso.md); it is listed here to turn on and off.</p> }}
      />
      <FormError message={toggle.error ?? remove.error} />
    </>
  );
}
