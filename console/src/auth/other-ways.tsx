// The other ways in, under the password form: a passkey, and a button per
// identity provider configured for single sign-on (a link: the start route
// redirects to the provider, which sends the browser back signed in).
import { useEffect, useState } from 'preact/hooks';
import { app, type AppSchemas } from '../api/client';
import { ApiError, messageOf, ok } from '../api/errors';
import { Button, FormError } from '../ui';
import { ceremonyMessage, getAssertion, passkeysSupported } from './webauthn';

type Provider = AppSchemas['SignInProviders']['identity_providers'][number];

export function OtherWays({ next, onSignedIn }: { next: string; onSignedIn: () => Promise<void> }) {
  const [providers, setProviders] = useState<Provider[]>([]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  useEffect(() => {
    app.GET('/app/api/session/oidc/providers').then(({ data }) => setProviders(data?.identity_providers ?? []), () => {});
  }, []);

  const withPasskey = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const options = await ok(app.POST('/app/api/session/passkey/options'));
      const response = await getAssertion(options as Record<string, any>);
      await ok(app.POST('/app/api/session/passkey', { body: { response } }));
      await onSignedIn();
    } catch (e) {
      setError(e instanceof ApiError ? e.message : ceremonyMessage(e) ?? messageOf(e));
    } finally {
      setBusy(false);
    }
  };

  const ssoHref = (p: Provider) => `/app/api/session/oidc/${encodeURIComponent(p.id)}/start?return_to=${encodeURIComponent(next)}`;
  if (!passkeysSupported() && !providers.length) return null;
  return (
    <div class="stack">
      <p class="auth-divider">or</p>
      {passkeysSupported() && <Button onClick={() => void withPasskey()} busy={busy}>Sign in with a passkey</Button>}
      {providers.map((p) => (
        <a key={p.id} class="btn btn-secondary btn-link" href={ssoHref(p)}>Sign in with {p.name}</a>
      ))}
      <FormError message={error} />
    </div>
  );
}
