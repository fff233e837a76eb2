// A project's SMTP server is a host relay nodes (and the test route) connect
// to on the tenant's word: one on the operator's own network would let a
// tenant reach it. The same refusal as webhook URLs (net/public-target.ts):
// the host, or any address it resolves to, must be public.
import { isIp, type Config } from '@edgemail/shared';
import { checkWebhookTarget, type TargetVerdict } from './public-target.js';

export type HostCheckSettings = Pick<Config, 'dns.doh_url' | 'smtp_servers.allow_private_targets'>;

export function checkSmtpHost(host: string, port: number, settings: HostCheckSettings): Promise<TargetVerdict> {
  const literal = isIp(host) && host.includes(':') ? `[${host}]` : host;
  return checkWebhookTarget(`http://${literal}:${port}/`, {
    dohUrl: settings['dns.doh_url'],
    allowPrivate: settings['smtp_servers.allow_private_targets'],
  });
}
