// Who is calling: a project key, a platform credential or a browser session.
import type { Role } from '@edgemail/shared';

export type Principal =
  | { kind: 'key'; id: string; name: string; projectId: string; permissions: readonly string[]; sandbox: boolean }
  | { kind: 'platform'; id: string; name: string }
  | {
      kind: 'session';
      id: string;
      userId: string;
      email: string;
      /** How the session was opened: `password`, `passkey` or `oidc`. */
      method: string;
      /** When the session was opened (its sign-in). */
      signedInAt: Date;
      /** The identity provider the session was opened through; null when not through one. */
      identityProviderId: string | null;
      /**
       * The membership in the resolved project, with that project's SSO policy and whether it
       * accepts this session's provider; null when not a member.
       */
      membership: { projectId: string; role: Role; groupPermissions: readonly string[] | null; ssoRequired: boolean; ssoAccepted: boolean } | null;
      /** The user is a platform admin (`users.platform_admin`), as of this request. */
      platformAdmin: boolean;
    };

/** How audit records and logs name the principal. */
export function actorName(p: Principal): string {
  switch (p.kind) {
    case 'key': return `api key ${p.name}`;
    case 'platform': return `admin api key ${p.name}`;
    case 'session': return p.email;
  }
}
