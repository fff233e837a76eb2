// The title and description of every resource of the api and console
// documents: each operation's one tag is its resource's title, and the
// document lists them (operation-names.ts). A route on a new resource needs
// its entry here; the document refuses to build without one.
import type { ResourceTags } from './operation-names.js';

/** `/api/v1`, keyed by resource as the operationIds name it; `admin…` are the admin client's (`/api/v1/admin`, platform credential). */
export const API_TAGS: ResourceTags = {
  analytics: { title: 'Analytics', description: 'Email counts, rates and sender health per day.' },
  apiKeys: { title: 'API keys', description: 'The project\'s `myk_` keys and the permissions each holds.' },
  auditLog: { title: 'Audit log', description: 'What was done in the project, by whom, paged by offset.' },
  bounces: { title: 'Bounces', description: 'Bounce reports received for the project\'s mail.' },
  dataExport: { title: 'Data export', description: 'Every record of the project as NDJSON.' },
  domains: { title: 'Domains', description: 'Sending and receiving domains, their DNS records, verification and tracking.' },
  emails: { title: 'Emails', description: 'Sending mail (one, a batch, scheduled), the email log, previews, attachments and cancelling.' },
  inboundEmails: { title: 'Inbound emails', description: 'Mail received for the project\'s domains: the list, raw message, attachments and retries.' },
  inboundRules: { title: 'Inbound rules', description: 'Ordered routing rules for inbound mail: store, deliver to chosen webhooks, refuse at SMTP time or drop; and a test of a message against them.' },
  invitations: { title: 'Invitations', description: 'Invitations of addresses into the project.' },
  memberGroups: { title: 'Member groups', description: 'The project\'s custom member groups and their permissions.' },
  members: { title: 'Members', description: 'The project\'s members, their roles and groups.' },
  permissions: { title: 'Permissions', description: 'The permissions a key or member can hold.' },
  project: { title: 'Project', description: 'The project itself: its SSO policy, and deleting it.' },
  relayNodes: { title: 'Relay nodes', description: 'The project\'s relay nodes, and revoking one.' },
  sandboxEmails: { title: 'Sandbox emails', description: 'Mail sent with a sandbox key, captured instead of delivered.' },
  smtpServers: { title: 'SMTP servers', description: 'The project\'s own SMTP servers to deliver through.' },
  streams: { title: 'Streams', description: 'Message streams (transactional, broadcast and the project\'s own).' },
  stylesheets: { title: 'Stylesheets', description: 'Shared CSS the templates inline.' },
  suppressions: { title: 'Suppressions', description: 'Addresses mail is not sent to.' },
  templates: { title: 'Templates', description: 'Templates, their versions and localizations, previews and test sends.' },
  usage: { title: 'Usage', description: 'Plan limits beside the project\'s consumption.' },
  webhooks: { title: 'Webhooks', description: 'Event subscriptions, their signing secrets and deliveries.' },

  adminCertificates: { title: 'Admin: certificates', description: 'Stored TLS certificates, internal authorities and issued server certificates.' },
  adminCredentials: { title: 'Admin: credentials', description: 'Platform credentials (`mya_`).' },
  adminIdentityProviders: { title: 'Admin: identity providers', description: 'OpenID Connect identity providers for console sign-in.' },
  adminListeners: { title: 'Admin: listeners', description: 'The SMTP listeners and the certificate each presents.' },
  adminPlans: { title: 'Admin: plans', description: 'Plans and their limits.' },
  adminProjects: { title: 'Admin: projects', description: 'Every project of the installation: creating them, listing and searching them by name.' },
  adminRelayNodes: { title: 'Admin: relay nodes', description: 'The relay nodes of every project, with their heartbeat and dead letters.' },
  adminSecurityEvents: { title: 'Admin: security events', description: 'Every account\'s security trail, paged by offset.' },
  adminSettings: { title: 'Admin: settings', description: 'Installation settings, changed at run time.' },
  adminSmtpPool: { title: 'Admin: SMTP pool', description: 'The shared SMTP servers projects deliver through.' },
  adminUsers: { title: 'Admin: users', description: 'Console user accounts, their passwords and who is a platform admin.' },
};

/** `/app/api`, the console's own routes. */
export const APP_TAGS: ResourceTags = {
  accountDefaultProject: { title: 'Default project', description: 'The project a session opens in.' },
  accountIdentities: { title: 'Identities', description: 'The identity-provider accounts linked to the signed-in user.' },
  accountPasskeys: { title: 'Passkeys', description: 'The signed-in user\'s passkeys (WebAuthn).' },
  accountSecurityEvents: { title: 'Security events', description: 'The signed-in user\'s security trail.' },
  accountSessions: { title: 'Sessions', description: 'The signed-in user\'s console sessions, and ending one.' },
  accountTotp: { title: 'TOTP', description: 'The signed-in user\'s authenticator-app second factor.' },
  events: { title: 'Events', description: 'The console\'s live event stream.' },
  invitations: { title: 'Invitations', description: 'Accepting an invitation into a project.' },
  passwordReset: { title: 'Password reset', description: 'Resetting a forgotten password by mail.' },
  session: { title: 'Session', description: 'Signing in (password, passkey, OpenID Connect) and out, and the session\'s project.' },
};
