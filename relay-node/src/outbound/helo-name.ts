// The name a relay node gives in EHLO/HELO on every delivery (RFC 5321
// 4.1.1.1): `outbound.helo_name`, else the host of `server.public_url`.
// Receivers judge a sender by it (many refuse a bare word such as `vm`), so it
// is a fully qualified domain name, or an address literal for an IP address.
import { ConfigError, envName, normalizeDomainName, parseIp, type Config } from '@edgemail/shared';

const SETTING = 'outbound.helo_name';

/**
 * The EHLO name, or a ConfigError naming `outbound.helo_name` when it (or the
 * host of `server.public_url` it defaults to) is not a fully qualified domain
 * name. An IP address, bare or bracketed, becomes `[192.0.2.1]` or
 * `[IPv6:2001:db8::1]` (RFC 5321 4.1.3).
 *
 * @example heloNameFromConfig(config) // 'mail.example.com', or '[127.0.0.1]' under pnpm dev
 */
export function heloNameFromConfig(config: Pick<Config, 'outbound.helo_name' | 'server.public_url'>): string {
  const set = config[SETTING].trim();
  const host = (set || publicHost(config['server.public_url'])).replace(/^\[(?:IPv6:)?(.*)\]$/i, '$1');
  const ip = parseIp(host);
  if (ip) return ip.kind() === 'ipv4' ? `[${ip.toString()}]` : `[IPv6:${ip.toString()}]`;
  const checked = normalizeDomainName(host);
  if ('name' in checked) return checked.name;
  const problem = set
    ? `"${set}" is not a fully qualified domain name (${checked.problem})`
    : `not set, and the host of server.public_url ("${host}") is not a fully qualified domain name (${checked.problem}); `
      + 'set it to this node\'s name, the one its outbound address resolves back to';
  throw new ConfigError(SETTING, envName(SETTING), problem);
}

function publicHost(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return '';
  }
}
