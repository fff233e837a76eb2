// The node's log when it runs as a program: one line per event, with its
// fields as JSON, on stdout (info) and stderr (warnings and errors).
import type { Log } from './smtp/types.js';

/**
 * @example createConsoleLog('relay').info('inbound message spooled', { id }) // 2026-11-26T02:00:00.000Z relay info inbound message spooled {"id":"…"}
 */
export function createConsoleLog(prefix = 'relay'): Log {
  const line = (level: string, message: string, fields?: Record<string, unknown>) =>
    `${new Date().toISOString()} ${prefix} ${level} ${message}${fields && Object.keys(fields).length ? ` ${JSON.stringify(fields)}` : ''}`;
  return {
    info: (message, fields) => console.log(line('info', message, fields)),
    warn: (message, fields) => console.error(line('warn', message, fields)),
    error: (message, fields) => console.error(line('error', message, fields)),
  };
}
