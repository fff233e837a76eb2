// Single sign-on providers linked to the account: link one (a trip to the
// provider and back; recent sign-in) or unlink one.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { app, type AppSchemas } from '../../api/client';
import { messageOf, ok } from '../../api/errors';
import { useSubmit } from '../../api/use-submit';
import { Button, Field, FormError, Table, useToast } from '../../ui';
import { when } from './tabs';
import { SsoError } from '../../auth/sso-error';

type Identity = AppSchemas['LinkedIdentity'];

export function Identities() {
  const toast = useToast();
  const [rows, setRows] = useState<Identity[] | undefined>();
  const [providers, setProviders] = useState<AppSchemas['SignInProviders']['identity_providers']>([]);
  const [providerId, setProviderId] = useState('');
  const [loadError, setLoadError] = useState<string>();
  const load = useCallback(async () => {
    try {
      const [linked, offered] = await Promise.all([ok(app.GET('/app/api/account/identities')), ok(app.GET('/app/api/session/oidc/providers'))]);
      setRows(linked.identities);
      setProviders(offered.identity_providers);
      setProviderId((p) => p || offered.identity_providers[0]?.id || '');
    } catch (e) { setLoadError(messageOf(e)); }
  }, []);
  useEffect(() => { void load(); }, [load]);

  const link = useSubmit(async () => {
    const { authorization_url } = await ok(app.POST('/app/api/account/identities', { body: { provider_id: providerId, return_to: '/account' } }));
    location.assign(authorization_url);
  }, ['provider_id']);
  const unlink = useSubmit(async (i: Identity) => {
    await ok(app.DELETE('/app/api/account/identities/{id}', { params: { path: { id: i.id } } }));
    toast(`${i.provider_name} unlinked`);
    await load();
  });

  return (
    <section class="card" aria-labelledby="identities-title">
      <h2 id="identities-title">Single sign-on</h2>
      <p class="card-lead">Identity providers you can sign in with. Linking or unlinking one needs a sign-in in the last 15 minutes.</p>
      {/* A refused link comes back here (its return_to) with #sso_error=<code>. */}
      <SsoError />
      {loadError ? <FormError message={loadError} /> : (
        <Table
          caption="Linked identity providers"
          rows={rows}
          rowKey={(i) => i.id}
          columns={[
            { label: 'Provider', cell: (i) => i.provider_name },
            { label: 'Your id there', cell: (i) => <code class="wrap-anywhere">{i.subject}</code> },
            { label: 'Linked', cell: (i) => when(i.created_at) },
            { label: 'Actions', class: 'actions', cell: (i) => <Button variant="ghost" aria-label={`Unlink ${i.provider_name}`} onClick={() => void unlink.run(i)}>Unlink</Button> },
          ]}
          empty={{ title: 'No linked providers', children: providers.length ? <p>Link one below to sign in through it.</p> : <p>None is configured on this service: a platform admin adds identity providers.</p> }}
        />
      )}
      <FormError message={unlink.error} />
      {providers.length > 0 && (
        <form class="inline-form" onSubmit={(e) => { e.preventDefault(); void link.run(); }}>
          <Field label="Provider" name="provider_id" error={link.fields.provider_id}>
            {(control) => <select {...control} value={providerId} onChange={(e) => setProviderId(e.currentTarget.value)}>{providers.map((p) => <option value={p.id}>{p.name}</option>)}</select>}
          </Field>
          <Button type="submit" busy={link.busy}>Link provider</Button>
        </form>
      )}
      <FormError message={link.error} />
    </section>
  );
}
