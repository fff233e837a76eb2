// The check every local server of the stack makes (the Neon bridge, the local
// DNS): loopback is not a boundary, a web page the developer opens can reach it.
import type { IncomingMessage } from 'node:http';

export const LOOPBACK = new Set(['localhost', '127.0.0.1', '::1']);

/**
 * Why a request cannot come from a local program, or undefined if it can.
 * Any web page the developer opens can reach loopback. Browsers send `Origin`
 * on every WebSocket handshake and every POST, so a request carrying one is a
 * page's; the Worker (workerd's fetch and WebSocket) and Node's clients send
 * none. A page reached by DNS rebinding is same-origin and may omit `Origin`
 * on a GET, but its `Host` still names the attacker's domain: only a loopback
 * name with our port is accepted.
 */
export function foreignReason(req: IncomingMessage, port: number): string | undefined {
  const { origin, host } = req.headers;
  if (origin !== undefined) return `foreign Origin ${origin.slice(0, 200)}`;
  const m = /^(\[[^\]]*\]|[^:]*)(?::(\d+))?$/.exec(host ?? '');
  const name = m?.[1]?.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  const hostPort = m?.[2] === undefined ? 80 : Number(m[2]);
  if (!name || !LOOPBACK.has(name) || hostPort !== port) return `foreign Host ${(host ?? '(none)').slice(0, 200)}`;
  return undefined;
}
