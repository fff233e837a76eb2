// The signed-in person, their session and memberships (GET /app/api/session):
// the one piece of global state besides the event stream. Pages read it with
// useSession(); changing the project or signing out goes through here.
import { createContext, type ComponentChildren } from 'preact';
import { useCallback, useContext, useEffect, useMemo, useState } from 'preact/hooks';
import { app, whenSignedOut, type AppSchemas } from './api/client';
import { ok } from './api/errors';

export type WhoAmI = AppSchemas['WhoAmI'];
export type Membership = AppSchemas['ConsoleMembership'];

export interface SessionState {
  /** undefined while the first read is under way; null when signed out. */
  me: WhoAmI | null | undefined;
  /** The membership of the session's current project, if it has one. */
  project: Membership | undefined;
  /** Reads the session again (after signing in, or anything that changes it). */
  refresh: () => Promise<WhoAmI | null>;
  /** PUT /app/api/session/project: the session's project from now on (the event stream follows it). */
  selectProject: (projectId: string) => Promise<void>;
  signOut: () => Promise<void>;
}

const SessionContext = createContext<SessionState | undefined>(undefined);

export function SessionProvider({ children }: { children: ComponentChildren }) {
  const [me, setMe] = useState<WhoAmI | null | undefined>(undefined);
  const refresh = useCallback(async () => {
    const { data, response } = await app.GET('/app/api/session');
    const next = response.ok && data ? data : null;
    setMe(next);
    return next;
  }, []);
  useEffect(() => {
    whenSignedOut(() => setMe(null));
    void refresh().catch(() => setMe(null));
  }, [refresh]);
  const selectProject = useCallback(async (projectId: string) => {
    setMe(await ok(app.PUT('/app/api/session/project', { body: { project_id: projectId } })));
  }, []);
  const signOut = useCallback(async () => {
    await app.DELETE('/app/api/session');
    setMe(null);
  }, []);
  const value = useMemo<SessionState>(() => {
    const current = me?.session.current_project_id;
    return { me, project: me?.memberships.find((m) => m.project_id === current), refresh, selectProject, signOut };
  }, [me, refresh, selectProject, signOut]);
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): SessionState {
  const state = useContext(SessionContext);
  if (!state) throw new Error('useSession() outside <SessionProvider>');
  return state;
}

/** The signed-in session, for pages inside the signed-in layout (which renders only once there is one). */
export function useSignedIn(): SessionState & { me: WhoAmI } {
  const state = useSession();
  if (!state.me) throw new Error('useSignedIn() outside the signed-in layout');
  return state as SessionState & { me: WhoAmI };
}
