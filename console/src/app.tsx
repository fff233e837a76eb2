// The whole console: the pages a person reaches without a session (sign-in,
// the mailed invitation and password-reset links), and the signed-in layout.
import { Redirect, Route, Switch, useLocation, useSearch } from 'wouter-preact';
import { SignInPage } from './auth/sign-in';
import { InvitationPage } from './auth/invitation';
import { PasswordResetPage } from './auth/password-reset';
import { safeNext } from './auth/next-path';
import { HOME } from './pages/registry';
import { SessionProvider, useSession } from './session';
import { SignedInLayout } from './shell/layout';
import { ToastProvider } from './ui';

export function App() {
  return (
    <ToastProvider>
      <SessionProvider>
        <Root />
      </SessionProvider>
    </ToastProvider>
  );
}

function Root() {
  const { me } = useSession();
  const [location] = useLocation();
  const search = useSearch();
  if (me === undefined) return <p class="loading" role="status">Loading…</p>;
  return (
    <Switch>
      {/* The mailed links: open with or without a session. */}
      <Route path="/app/invitation"><InvitationPage /></Route>
      <Route path="/app/password-reset"><PasswordResetPage /></Route>
      <Route path="/sign-in">{me ? <Redirect to={safeNext(search, HOME)} replace /> : <SignInPage />}</Route>
      <Route>
        {me ? <SignedInLayout /> : <Redirect to={location === '/' ? '/sign-in' : `/sign-in?next=${encodeURIComponent(location + (search ? `?${search}` : ''))}`} replace />}
      </Route>
    </Switch>
  );
}
