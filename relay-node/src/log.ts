// The node's log: the `Log` every part writes to, and the console log it is
// when the node runs as a program: one line per event, with its
// fields as JSON, on stdout (debug, info) and stderr (warnings and errors).
// Debug lines (each step of a message) are dropped unless asked for.

/**
 * Structured log lines; the node's logger or a test's collector. `info` is
 * what a person reads at the default level: one line per message received,
 * delivered or refused, and per error; `debug` is the rest (each step of a
 * message), shown with `--verbose` or `relay_node.log_level = debug`.
 */
export interface Log {
  /** Optional: a log without it drops these lines. */
  debug?(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

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
