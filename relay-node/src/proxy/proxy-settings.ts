// Start-up refusal for a PROXY protocol block that cannot work.
import { ConfigError, envName, isIpOrCidr } from '@edgemail/shared';

/**
 * Throws a ConfigError naming `<listener>.proxy_protocol.trusted` when PROXY
 * protocol is enabled with no trusted peers (every peer would be untrusted, so
 * every header would be refused and the listener would silently count the
 * balancer as the client) or with an entry that is not an IP or CIDR.
 *
 * @example validateProxySettings(true, [], 'inbound') // throws: invalid setting inbound.proxy_protocol.trusted ...
 */
export function validateProxySettings(enabled: boolean, trusted: readonly string[], listener?: string): void {
  if (!enabled) return;
  const name = listener ? `${listener}.proxy_protocol.trusted` : 'proxy_protocol.trusted';
  if (trusted.length === 0) {
    throw new ConfigError(name, envName(name), 'may not be empty when proxy_protocol.enabled is true');
  }
  const bad = trusted.find((entry) => !isIpOrCidr(entry));
  if (bad !== undefined) throw new ConfigError(name, envName(name), `${JSON.stringify(bad)} is not an IP address or CIDR range`);
}
