// The node's log when it runs as a program: one line per event, with its
// fields as JSON, on stdout (debug, info) and stderr (warnings and errors).
// Debug lines (each step of a message) are dropped unless asked for.
import type { Log } from './inbound/listener/types.js';

export type LogLevel = 'info' | 'debug';

export interface ConsoleLogOptions {
  /** `debug` prints the debug lines too (`--verbose`, `relay_node.log_level`). Default `info`. */
  level?: LogLevel;
}

/**
 * @example createConsoleLog('relay').info('inbound message forwarded', { id }) // 2026-11-26T02:00:00.000Z relay info inbound message forwarded {"id":"…"}
 */
export function createConsoleLog(prefix = 'relay', options: ConsoleLogOptions = {}): Log {
  const line = (level: string, message: string, fields?: Record<string, unknown>) =>
    `${new Date().toISOString()} ${prefix} ${level} ${message}${fields && Object.keys(fields).length ? ` ${JSON.stringify(fields)}` : ''}`;
  const verbose = options.level === 'debug';
  return {
    debug: (message, fields) => {
      if (verbose) console.log(line('debug', message, fields));
    },
    info: (message, fields) => console.log(line('info', message, fields)),
    warn: (message, fields) => console.error(line('warn', message, fields)),
    error: (message, fields) => console.error(line('error', message, fields)),
  };
}
