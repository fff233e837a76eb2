// The OpenID Connect providers people sign in through: add one (its client
// secret is sent once and never shown again: the form forgets it on success),
// turn one on or off, delete one. docs/sso.md "Identity providers".
import { useCallback, useEffect, useState } from 'preact/hooks';
import type { ApiSchemas } from '../../api/client';
import { messageOf, ok } from '../../api/errors';
import { useSubmit } from '../../api/use-submit';
import { Button, Field, FormError, Table, useToast } from '../../ui';
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
  const blank = { name: '', issuer: '', client_id: '', client_secret: '', allowed_domains: '', default_project_id: '', default_role: 'member' as 'member' | 'admin' };
  const [form, setForm] = useState(blank);
  const field = (key: keyof typeof blank) => ({ name: key, value: form[key], onInput: (e: { currentTarget: HTMLInputElement }) => setForm({ ...form, [key]: e.currentTarget.value }) });
  const create = useSubmit(async () => {
    const made = await ok(admin.POST('/api/v1/admin/identity-providers', { body: {
      name: form.name, issuer: form.issuer.trim(), client_id: form.client_id.trim(), client_secret: form.client_secret,
      allowed_domains: form.allowed_domains.split(/[\s,]+/).filter(Boolean),
      default_project_id: form.default_project_id.trim() || null, default_role: form.default_role, enabled: true,
    } }));
    setForm(blank);
    toast(`${made.identity_provider.name} added: register ${made.identity_provider.redirect_uri} at the provider`);
    await load();
  }, ['name', 'issuer', 'client_id', 'client_secret', 'allowed_domains', 'default_project_id', 'default_role']);
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
        empty={{ title: 'No identity providers', children: <p>Add one below; people whose address is in its domains can then sign in through it.</p> }}
      />
      <FormError message={toggle.error ?? remove.error} />
      <section class="card" aria-labelledby="add-provider-title">
        <h2 id="add-provider-title">Add an identity provider</h2>
        <p class="card-lead">OpenID Connect. The service reads the issuer's discovery document when you add it. Register the redirect URI shown in the list at the provider.</p>
        <form class="inline-form" onSubmit={(e) => { e.preventDefault(); void create.run(); }}>
          <Field label="Provider name" {...field('name')} error={create.fields.name} required />
          <Field label="Issuer URL" type="url" spellcheck={false} {...field('issuer')} error={create.fields.issuer} hint="https (http only on loopback), exactly as the provider writes it." required />
          <Field label="Client id" autoComplete="off" spellcheck={false} {...field('client_id')} error={create.fields.client_id} required />
          <Field label="Client secret" type="password" autoComplete="off" {...field('client_secret')} error={create.fields.client_secret} hint="Stored sealed; never shown again." required />
          <Field label="Allowed email domains" spellcheck={false} {...field('allowed_domains')} error={create.fields.allowed_domains} hint="Separated by spaces or commas; empty: nobody may sign in yet." />
          <Field label="Project new users join" spellcheck={false} {...field('default_project_id')} error={create.fields.default_project_id} hint="A project id; empty: none until invited." />
          <Field label="Their role" name="default_role" error={create.fields.default_role}>
            {(control) => (
              <select {...control} value={form.default_role} onChange={(e) => setForm({ ...form, default_role: e.currentTarget.value as 'member' | 'admin' })}>
                <option value="member">Member</option>
                <option value="admin">Admin</option>
              </select>
            )}
          </Field>
          <Button type="submit" variant="primary" busy={create.busy}>Add provider</Button>
        </form>
        <FormError message={create.error} />
      </section>
    </>
  );
}
