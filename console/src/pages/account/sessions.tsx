// Your signed-in sessions: where and when each signed in, and signing out one
// (this one too) or every other.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { app, type AppSchemas } from '../../api/client';
import { messageOf, ok } from '../../api/errors';
import { useSubmit } from '../../api/use-submit';
import { useSignedIn } from '../../session';
import { Button, FormError, Table, useToast } from '../../ui';
import { when } from './tabs';

type Live = AppSchemas['LiveSession'];

/** "Chrome 126 on macOS" from a user agent; the whole string stays in the cell's title. */
function describeAgent(ua: string | null): string {
  if (!ua) return 'Unknown browser';
  const browser = ([[/Edg\/(\d+)/, 'Edge'], [/Firefox\/(\d+)/, 'Firefox'], [/Chrom(?:e|ium)\/(\d+)/, 'Chrome'], [/Version\/(\d+).*Safari/, 'Safari']] as const)
    .map(([re, name]) => { const m = re.exec(ua); return m ? `${name} ${m[1]}` : undefined; }).find(Boolean);
  const os = ([[/iPhone|iPad/, 'iOS'], [/Android/, 'Android'], [/Windows/, 'Windows'], [/Mac OS X/, 'macOS'], [/CrOS/, 'ChromeOS'], [/Linux/, 'Linux']] as const)
    .find(([re]) => re.test(ua))?.[1];
  return browser ? (os ? `${browser} on ${os}` : browser) : ua.slice(0, 60);
}

const METHOD: Record<Live['method'], string> = { password: 'Password', passkey: 'Passkey', oidc: 'Single sign-on' };

export function Sessions() {
  const toast = useToast();
  const { refresh } = useSignedIn();
  const [rows, setRows] = useState<Live[] | undefined>();
  const [loadError, setLoadError] = useState<string>();
  const load = useCallback(async () => {
    try { setRows((await ok(app.GET('/app/api/account/sessions'))).sessions); } catch (e) { setLoadError(messageOf(e)); }
  }, []);
  useEffect(() => { void load(); }, [load]);

  const end = useSubmit(async (s: Live) => {
    await ok(app.DELETE('/app/api/account/sessions/{id}', { params: { path: { id: s.id } } }));
    if (s.current) { await refresh(); return; }
    toast('Session ended: it is signed out');
    await load();
  });
  const endOthers = useSubmit(async () => {
    // POST /app/api/session/sign-out-all ends this session too: end the others one by one instead.
    for (const s of rows ?? []) if (!s.current) await ok(app.DELETE('/app/api/account/sessions/{id}', { params: { path: { id: s.id } } }));
    toast('Every other session is signed out');
    await load();
  });
  const others = (rows ?? []).filter((s) => !s.current).length;

  return (
    <section class="card" aria-labelledby="sessions-title">
      <h2 id="sessions-title">Sessions</h2>
      <p class="card-lead">Where your account is signed in. End one you do not recognise: it is signed out at once.</p>
      {loadError ? <FormError message={loadError} /> : (
        <Table
          caption="Your signed-in sessions"
          rows={rows}
          rowKey={(s) => s.id}
          columns={[
            { label: 'Browser', cell: (s) => <span title={s.user_agent ?? undefined}>{describeAgent(s.user_agent)}{s.current && <> <span class="badge badge-ok">This browser</span></>}</span> },
            { label: 'Signed in with', cell: (s) => METHOD[s.method] },
            { label: 'Address', cell: (s) => s.client_ip ?? '—' },
            { label: 'Signed in', cell: (s) => when(s.created_at) },
            { label: 'Last seen', cell: (s) => when(s.last_seen_at) },
            { label: 'Actions', class: 'actions', cell: (s) => <Button variant="ghost" aria-label={s.current ? 'End session of this browser' : `End session from ${s.client_ip ?? 'an unknown address'}, signed in ${when(s.created_at)}`} onClick={() => void end.run(s)}>End session</Button> },
          ]}
          empty={{ title: 'No live sessions' }}
        />
      )}
      <FormError message={end.error ?? endOthers.error} />
      {others > 0 && <Button variant="danger" busy={endOthers.busy} onClick={() => void endOthers.run()}>End all other sessions</Button>}
    </section>
  );
}
