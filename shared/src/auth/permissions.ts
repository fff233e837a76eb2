// The permission catalogue: every `<resource>:<action>` a key can hold.
// Adding a resource here makes it grantable, listable and covered by `*`.

export const catalogue = {
  emails: ['read', 'write'],
  suppressions: ['read', 'write', 'delete'],
  domains: ['read', 'write', 'delete'],
  analytics: ['read'],
  bounces: ['read'],
  webhooks: ['read', 'write', 'delete'],
  data: ['read'],
  relay: ['read', 'write'],
  apikeys: ['read', 'write', 'delete'],
  sandbox: ['write'],
  inbound: ['read', 'write', 'delete'],
  templates: ['read', 'write', 'delete'],
  smtpservers: ['read', 'write', 'delete'],
  audit: ['read'],
  // The project's people: members, custom member groups, invitations (docs/console.md).
  members: ['read', 'write', 'delete'],
} as const satisfies Record<string, readonly ('read' | 'write' | 'delete')[]>;

export type Resource = keyof typeof catalogue;
export type Action = 'read' | 'write' | 'delete';
export type Permission = { [R in Resource]: `${R}:${(typeof catalogue)[R][number]}` }[Resource];

/**
 * Held only by a signed-in member with the right role, never by a key, not
 * even one holding `*`: deleting the project and changing its SSO policy.
 */
export const sessionOnlyPermissions = ['project:delete', 'sso:write'] as const;
export type SessionOnlyPermission = (typeof sessionOnlyPermissions)[number];

/** The one session-only check: key creation, the permission check and `judge` all ask it. */
export function isSessionOnlyPermission(p: string): p is SessionOnlyPermission {
  return (sessionOnlyPermissions as readonly string[]).includes(p);
}

export const WILDCARD = '*';

export const allPermissions: readonly Permission[] = Object.entries(catalogue).flatMap(
  ([resource, actions]) => actions.map((a) => `${resource}:${a}` as Permission),
);
const known = new Set<string>(allPermissions);

export function isPermission(p: string): p is Permission {
  return known.has(p);
}

/**
 * Checks a requested key permission list; returns the first problem naming the
 * entry, or null when every entry is grantable.
 */
export function permissionListProblem(list: readonly string[], opts: { allowWildcard: boolean }): string | null {
  for (const entry of list) {
    if (entry === WILDCARD) {
      if (!opts.allowWildcard) return 'wildcard * is not allowed here';
      if (list.length > 1) return 'wildcard * must be the only entry';
      continue;
    }
    if (isSessionOnlyPermission(entry)) return `permission ${entry} cannot be granted to an API key`;
    if (!known.has(entry)) return `unknown permission: ${entry}`;
  }
  return null;
}

export type Role = 'owner' | 'admin' | 'member';
export const roleRank: Record<Role, number> = { member: 1, admin: 2, owner: 3 };

/** What a plain member may do without a custom group: read and send. */
const memberPermissions: readonly Permission[] = [
  ...allPermissions.filter((p) => p.endsWith(':read') && p !== 'data:read' && p !== 'audit:read'),
  'emails:write', 'sandbox:write', 'templates:write', 'suppressions:write', 'inbound:write',
];

/** The permissions a membership role carries; owners and admins hold everything. */
export function rolePermissions(role: Role): readonly string[] {
  switch (role) {
    case 'owner': return [WILDCARD, ...sessionOnlyPermissions];
    case 'admin': return [WILDCARD, 'sso:write'];
    case 'member': return memberPermissions;
  }
}

export type Grant = 'granted' | 'missing-action' | 'no-access';

/** Judges a held permission list against one required permission. */
export function judge(held: readonly string[], required: string): Grant {
  const resource = required.split(':')[0]!;
  if (held.includes(required)) return 'granted';
  if (!isSessionOnlyPermission(required) && held.includes(WILDCARD)) return 'granted';
  return held.some((p) => p.startsWith(`${resource}:`)) ? 'missing-action' : 'no-access';
}
