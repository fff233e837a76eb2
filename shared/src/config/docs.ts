// Renders docs/config.md from the settings declaration.
import { envName, type Setting } from './define.js';
import { removedSettings, settings } from './settings.js';

function show(setting: Setting<unknown>): string {
  if (setting.secret) return '(secret, no default)';
  const d = setting.default;
  if (setting.kind === 'duration') return `${Number(d) / 1000}s`;
  if (Array.isArray(d)) return d.length ? d.join(',') : '(empty)';
  return d === '' ? '(empty)' : String(d);
}

export function renderConfigDocs(): string {
  const rows = Object.entries(settings).map(([name, s]) => {
    const setting = s as Setting<unknown>;
    return `| \`${name}\` | \`${envName(name)}\` | ${setting.kind} | ${show(setting)} | ${setting.description} |`;
  });
  return [
    '# Settings',
    '',
    'Generated from `shared/src/config/settings.ts` by `pnpm edgemail config-docs`; do not edit by hand.',
    '',
    'Each setting is read from the environment variable in the second column. Lists are comma separated;',
    'durations take `ms`, `s`, `m` or `h`; booleans take `true`/`false`. An unknown `SERVICE_*` variable or a',
    'malformed value stops start-up with a message naming the setting.',
    '',
    'A few settings (rate limits, CORS origins, console link periods, per-project caps, retention) can also be',
    'changed while the service runs, through `PATCH /api/v1/admin/settings`: [settings.md](settings.md).',
    '',
    'SMTP listeners run on relay nodes. A node\'s MX listener reads `relay_node.inbound.*`; each of those',
    'left unset follows its `inbound.*` twin, so `SERVICE_INBOUND_RATE_PER_MINUTE=30` also limits the',
    'listener `pnpm dev` starts on port 2525.',
    '',
    '| Setting | Env | Kind | Default | Meaning |',
    '|---|---|---|---|---|',
    ...rows,
    '',
    `Removed keys, still accepted and named in the boot log when set: ${removedSettings.map((k) => `\`${k}\``).join(', ')}, and per-listener \`tls.acme.*\` blocks.`,
    'The edge, and every `edgemail` command that loads settings (`relay start` included), log',
    '`removed settings are set and ignored: <names>`.',
    '',
  ].join('\n');
}
