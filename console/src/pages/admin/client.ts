// The platform admin's calls (/api/v1/admin, and /api/v1 with a project named
// by header): typed by the same generated OpenAPI types as every other call.
// A platform admin's session calls them with its cookie alone, as every other
// page does; anyone else pastes a platform credential, sent as
// `Authorization: Bearer`. The credential lives only in the admin page's
// component state: never in storage, a URL or a module variable, and gone
// when the admin pages are left or locked. A 401 here says the credential is
// wrong; it does not sign the console out.
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import createClient from 'openapi-fetch';
import type { paths as ApiPaths } from '../../api/generated/api';

export type AdminClient = ReturnType<typeof createClient<ApiPaths>>;

/** A client sending the credential on every call, or the session cookie alone when `token` is undefined. */
export function adminClient(token: string | undefined): AdminClient {
  return createClient<ApiPaths>({
    baseUrl: location.origin,
    ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}),
  });
}

export const AdminContext = createContext<AdminClient | undefined>(undefined);

export function useAdmin(): AdminClient {
  const client = useContext(AdminContext);
  if (!client) throw new Error('useAdmin() outside the unlocked admin pages');
  return client;
}
