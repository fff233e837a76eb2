// The node's log: the `Log` every part writes to, and the console log it is
// when the node runs as a program: one line per event, with its
// fields as JSON, on stdout (debug, info) and stderr (warnings and errors).
// Debug lines (each step of a message) are dropped unless asked for. The
// packaged node writes JSON lines instead (`relay_node.log_format`), all on
// stdout, for journald and log shippers.

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
  /**
   * `json`: one object per line, `{"time","level","msg",...fields}`, every level on stdout (journald keeps
   * the order; a field named like one of the first three is dropped). Default `text`.
   */
  format?: 'text' | 'json';
}

/**
 * @example createConsoleLog('relay').info('inbound message forwarded', { id }) // 2026-11-26T02:00:00.000Z relay info inbound message forwarded {"id":"…"}
 */
export function createConsoleLog(prefix = 'relay', options: ConsoleLogOptions = {}): Log {
  if (options.format === 'json') return createJsonLog(options.level);
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

/** JSON lines on stdout: `{"time":"…","level":"info","msg":"relay node started","node":"…"}`. */
function createJsonLog(level?: LogLevel): Log {
  const write = (lvl: string, msg: string, fields?: Record<string, unknown>) => {
    const { time: _t, level: _l, msg: _m, ...rest } = fields ?? {};
    console.log(JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...rest }));
  };
  return {
    debug: (message, fields) => {
      if (level === 'debug') write('debug', message, fields);
    },
    info: (message, fields) => write('info', message, fields),
    warn: (message, fields) => write('warn', message, fields),
    error: (message, fields) => write('error', message, fields),
  };
}
