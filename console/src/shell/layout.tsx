// The signed-in frame: a top bar (project picker, live status, who you are,
// sign out), the left nav with every area, and the page.
import { Suspense } from 'preact/compat';
import { useState } from 'preact/hooks';
import { Link, Redirect, Route, Switch, useLocation } from 'wouter-preact';
import { areas, HOME } from '../pages/registry';
import type { Area } from '../routes';
import { useSignedIn } from '../session';
import { Button, EmptyState, Page } from '../ui';
import { LiveProvider, useLiveStatus } from '../live';
import { ProjectPicker } from './project-picker';

const GROUPS: { id: Area['group']; label: string }[] = [
  { id: 'project', label: 'Project' },
  { id: 'you', label: 'You' },
  { id: 'platform', label: 'Platform' },
];

export function SignedInLayout() {
  const session = useSignedIn();
  const { me, project, signOut } = session;
  const [location] = useLocation();
  const [menuOpen, setMenuOpen] = useState(false);
  const shown = areas.filter((a) => !a.visible || a.visible(session));
  const needsProject = (a: Area) => a.group === 'project';
  return (
    <LiveProvider projectId={project?.project_id ?? null}>
      <a class="skip-link" href="#main">Skip to content</a>
      <header class="topbar">
        <Button variant="ghost" class="menu-toggle" aria-expanded={menuOpen} aria-controls="nav" onClick={() => setMenuOpen(!menuOpen)}>Menu</Button>
        <Link href={HOME} class="brand">edgemail</Link>
        <ProjectPicker />
        <LiveIndicator />
        <span class="topbar-user" title={me.user.email}>{me.user.name || me.user.email}</span>
        <Button variant="ghost" onClick={() => void signOut()}>Sign out</Button>
      </header>
      <div class="frame">
        <nav id="nav" class={`nav${menuOpen ? ' nav-open' : ''}`} aria-label="Console" onClick={() => setMenuOpen(false)}>
          {GROUPS.map((g) => {
            const inGroup = shown.filter((a) => a.group === g.id);
            if (!inGroup.length) return null;
            return (
              <div class="nav-group" key={g.id}>
                <h2 class="nav-heading">{g.label}</h2>
                <ul>
                  {inGroup.map((a) => {
                    const current = location === a.href || location.startsWith(`${a.href}/`);
                    return <li key={a.id}><Link href={a.href} aria-current={current ? 'page' : undefined}>{a.label}</Link></li>;
                  })}
                </ul>
              </div>
            );
          })}
        </nav>
        <main id="main" class="main" tabIndex={-1}>
          {project?.sso_required && me.session.method !== 'oidc' && (
            <p class="form-error" role="alert">
              {project.project_name} requires single sign-on: sign out, then sign in through your identity provider to work in it (or pick another project above).
            </p>
          )}
          <Suspense fallback={<p class="loading" role="status">Loading…</p>}>
            <Switch>
              <Route path="/"><Redirect to={project || !me.memberships.length ? HOME : '/account'} replace /></Route>
              {shown.flatMap((a) => a.routes.map((r) => (
                <Route key={r.path} path={r.path}>
                  {(params) => (needsProject(a) && !project ? <NoProject /> : <r.component params={params} />)}
                </Route>
              )))}
              <Route><NotFound /></Route>
            </Switch>
          </Suspense>
        </main>
      </div>
    </LiveProvider>
  );
}

function LiveIndicator() {
  const status = useLiveStatus();
  const text = { live: 'Live', connecting: 'Connecting…', offline: 'Offline' }[status];
  return <span class={`live-indicator live-${status}`} title="Live updates from the event stream">{text}</span>;
}

function NoProject() {
  const { me } = useSignedIn();
  return (
    <Page title="Choose a project">
      <EmptyState title={me.memberships.length ? 'No project chosen' : 'You are not in a project yet'}>
        <p>{me.memberships.length ? 'Pick a project in the bar at the top to work in it.' : 'Ask a project owner to invite you; the invitation mail has a link that adds you.'}</p>
      </EmptyState>
    </Page>
  );
}

function NotFound() {
  return (
    <Page title="Not found">
      <EmptyState title="There is no page here">
        <p><Link href={HOME}>Go to the email log</Link></p>
      </EmptyState>
    </Page>
  );
}
