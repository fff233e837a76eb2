// The `outbound.*` settings as the delivery code reads them.
import type { Config } from '@edgemail/shared';
import type { RouteSettings } from './route.js';

/**
 * @example const settings = routeSettingsFromConfig(loadConfig(process.env).config);
 */
export function routeSettingsFromConfig(config: Config): RouteSettings {
  return {
    captureDir: config['outbound.capture_dir'],
    smarthost: config['outbound.smarthost'],
    // Production is always 25; `outbound.mx_port` exists for tests only.
    mxPort: config['outbound.mx_port'],
    requireTls: config['outbound.require_tls'],
    allowPrivateProjectServers: config['smtp_servers.allow_private_targets'],
    allowPrivateMx: config['outbound.allow_private_mx'],
  };
}

/** One word for the start-up log line: where MX-routed mail goes. */
export function describeOutbound(settings: RouteSettings): string {
  if (settings.captureDir) return `capture:${settings.captureDir}`;
  if (settings.smarthost) return `smarthost:${settings.smarthost}`;
  return `mx:${settings.mxPort}${settings.requireTls ? ' (STARTTLS required)' : ''}${settings.allowPrivateMx ? ' (private MX addresses allowed)' : ''}`;
}
