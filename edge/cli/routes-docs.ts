// Renders docs/routes.md from the route declarations: every route with the
// permission it needs, the session role gate and the audit type it records.
import { apiRoutes, appRoutes, relayRoutes, webhookRoutes } from '../src/routes/registry.js';

const row = ({ route: r }: (typeof apiRoutes)[number]) =>
  `| \`${r.method.toUpperCase()} ${r.path}\` | \`${r['x-permission']}\` | ${r['x-role'] ?? ''} | ${r['x-audit-type'] ? `\`${r['x-audit-type']}\`` : ''} | ${r.summary ?? ''} |`;

export function renderRoutesDocs(): string {
  const rows = apiRoutes.map(row);
  return [
    '# Routes',
    '',
    'Generated from the route declarations by `pnpm edgemail routes-docs`; do not edit by hand.',
    '',
    '- **Permission**: what a key must hold (`platform:admin`: a platform credential; `authenticated`: any valid credential).',
    '- **Role**: the least membership role a browser session needs besides the permission.',
    '- **Audit type**: recorded on success. With a project (a key, a session, or a platform credential with',
    '  `X-Service-Project-Id`) the event is project activity; without one it goes to the actor\'s security trail.',
    '  Derived from method and path: `POST` on a collection → `<resource>.created`; `PUT`/`PATCH` → `.updated`;',
    '  `DELETE` → `.deleted`; `POST …/{id}/<verb>` → `<resource>.<verb>`; nested collections join with `_`.',
    '',
    '| Route | Permission | Role | Audit type | Summary |',
    '|---|---|---|---|---|',
    ...rows,
    '',
    '## Console',
    '',
    'The console API ([console.md](console.md)); `pnpm edgemail export-api-spec --surface app` describes it.',
    'Browser sessions only: an API key or platform credential is refused with 403.',
    '',
    '- **Permission**: `public` takes no credential (the route proves who is calling); `session` any signed-in session;',
    '  a `<resource>:<action>` is judged in the session\'s project as on `/api/v1`.',
    '- **Audit type**: as above, in the user\'s security trail; sign-in records `auth.login.succeeded` and',
    '  `auth.login.failed` itself, refusals included.',
    '',
    '| Route | Permission | Role | Audit type | Summary |',
    '|---|---|---|---|---|',
    ...appRoutes.map(row),
    '',
    '## Relay-node channel',
    '',
    'What relay nodes call ([relay-protocol.md](relay-protocol.md)); `pnpm edgemail export-api-spec --surface relay` describes it.',
    '',
    '- **Credential**: `node` is a `myr_` node credential; `enrolment` a project key holding `relay:write`.',
    '- **Limiter**: counted per node (`node:<id>`); enrolment in the key\'s `api` window.',
    '',
    '| Route | Credential | Limiter | Audit type | Summary |',
    '|---|---|---|---|---|',
    ...relayRoutes.map(({ route: r }) =>
      `| \`${r.method.toUpperCase()} ${r.path}\` | ${r['x-relay-credential']} | \`${r['x-rate-limit']}\` | ${r['x-audit-type'] ? `\`${r['x-audit-type']}\`` : ''} | ${r.summary ?? ''} |`),
    '',
    '## Provider webhooks',
    '',
    'What providers post to ([ses.md](ses.md)); `pnpm edgemail export-api-spec --surface webhooks` describes it.',
    'No credential of ours: each message carries its own proof (an SNS signature). Counted per client address in the limiter named.',
    '',
    '| Route | Limiter | Summary |',
    '|---|---|---|',
    ...webhookRoutes.map(({ route: r }) => `| \`${r.method.toUpperCase()} ${r.path}\` | \`${r['x-rate-limit']}\` | ${r.summary ?? ''} |`),
    '',
  ].join('\n');
}
