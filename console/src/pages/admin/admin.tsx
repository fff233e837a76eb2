// /admin/*: the platform admin's pages, one component for the whole area so
// the unlocked client survives moving between its tabs. First it asks the API
// whether this session may administer the platform (GET /api/v1/admin/users
// with the cookie alone): a platform admin's session may (users.platform_admin,
// docs/console.md "Platform admins in the console") and the pages open at once;
// anyone else unlocks them with a platform credential.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { ApiError, messageOf, ok } from '../../api/errors';
import { useSubmit } from '../../api/use-submit';
import type { PageProps } from '../../routes';
import { Button, Field, FormError, Page } from '../../ui';
import { AdminContext, adminClient, type AdminClient } from './client';
import { Certificates } from './certificates';
import { IdentityProviders } from './identity-providers';
import { PlansAndProjects } from './plans-projects';
import { RelayNodes } from './relay-nodes';
import { Settings } from './settings';
import { Users } from './users';
import '../account/account.css';

const SECTIONS = [
  { id: 'users', label: 'Users', page: Users },
  { id: 'projects', label: 'Plans & projects', page: PlansAndProjects },
  { id: 'identity-providers', label: 'Identity providers', page: IdentityProviders },
  { id: 'settings', label: 'Settings', page: Settings },
  { id: 'certificates', label: 'Certificates & listeners', page: Certificates },
  { id: 'relay-nodes', label: 'Relay nodes', page: RelayNodes },
] as const;

export default function Admin({ params }: PageProps<Record<string, string>>) {
  const sectionId = (params['*'] ?? params[0] ?? '').split('/')[0] || 'users';
  const section = SECTIONS.find((s) => s.id === sectionId);
  const [client, setClient] = useState<AdminClient | undefined>();
  /** The pages were opened by the session itself: nothing to lock. */
  const [bySession, setBySession] = useState(false);
  const [checking, setChecking] = useState(true);
  const [token, setToken] = useState('');

  // Does the API accept this session on the admin surface?
  useEffect(() => {
    const session = adminClient(undefined);
    void session.GET('/api/v1/admin/users').then(({ response }) => {
      if (response.ok) { setClient(session); setBySession(true); }
    }).finally(() => setChecking(false));
  }, []);

  const unlock = useSubmit(async () => {
    const candidate = adminClient(token.trim());
    try {
      await ok(candidate.GET('/api/v1/admin/users'));
    } catch (e) {
      throw new ApiError(e instanceof ApiError ? e.status : 0, { error: messageOf(e), fields: { token: messageOf(e) } });
    }
    setToken('');
    setClient(candidate);
  }, ['token']);

  const tabs = useMemo(() => (
    <nav class="tabs" aria-label="Platform admin">
      {SECTIONS.map((s) => <Link href={`/admin/${s.id}`} class={`tab${s === section ? ' tab-current' : ''}`} aria-current={s === section ? 'page' : undefined}>{s.label}</Link>)}
    </nav>
  ), [section]);

  if (checking) return <p class="loading" role="status">Loading…</p>;
  if (!client) {
    return (
      <Page title="Platform admin" description="Users, plans, projects, identity providers, settings, certificates and relay nodes of the whole service.">
        <section class="card" aria-labelledby="unlock-title">
          <h2 id="unlock-title">Unlock with a platform credential</h2>
          <p class="card-lead">
            Your account is not a platform admin (an operator makes one with <code>pnpm edgemail admin grant-platform-admin</code>,
            or another admin from the Users page). A platform credential (<code>mya_…</code>, made by
            <code>pnpm edgemail admin create-credential</code>) unlocks these pages too; it stays in this page's memory only,
            until you lock, leave the admin pages or reload.
          </p>
          <form class="inline-form" onSubmit={(e) => { e.preventDefault(); void unlock.run(); }}>
            <Field label="Platform credential" name="token" type="password" autoComplete="off" spellcheck={false} value={token} onInput={(e) => setToken(e.currentTarget.value)} error={unlock.fields.token} required />
            <Button type="submit" variant="primary" busy={unlock.busy}>Unlock</Button>
          </form>
          <FormError message={unlock.error} />
        </section>
      </Page>
    );
  }
  const Section = section?.page;
  return (
    <AdminContext.Provider value={client}>
      <Page title={section ? `Admin · ${section.label}` : 'Admin'} actions={bySession ? undefined : <Button variant="ghost" onClick={() => setClient(undefined)}>Lock</Button>}>
        {tabs}
        {Section ? <Section /> : <p>There is no admin page here. <Link href="/admin/users">Go to users</Link></p>}
      </Page>
    </AdminContext.Provider>
  );
}
