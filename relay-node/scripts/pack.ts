// `pnpm relay:pack`: the relay node as one installable npm package,
// `edgemail-relay-node-<version>.tgz` (in .data/pack/, or --out <dir>).
// esbuild bundles the node and every dependency into dist/ (the entry and the
// DKIM/SPF verification worker and the outbound compose worker it starts), so the package has no runtime
// dependencies to fetch: `npm i -g ./edgemail-relay-node-<version>.tgz` needs
// no registry. Beside dist/: the systemd unit, the operations guide, a README.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build, type Plugin } from 'esbuild';

const RELAY = fileURLToPath(new URL('..', import.meta.url));
const ROOT = resolve(RELAY, '..');

/**
 * Two files load mailauth's internals through `createRequire(import.meta.url)`,
 * which esbuild cannot follow; written as plain `require(…)` calls they are
 * bundled like any other (the package has no node_modules of its own to find
 * them in at run time).
 */
const inlineCreateRequire: Plugin = {
  name: 'inline-create-require',
  setup(b) {
    b.onLoad({ filter: /relay-node\/src\/.*\.ts$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      const m = /^const (\w+) = createRequire\(import\.meta\.url\);$/m.exec(text);
      if (!m) return undefined;
      const name = m[1]!;
      const contents = text.replace(m[0], '').replace(new RegExp(`\\b${name}\\((['"])`, 'g'), 'require($1');
      return { contents, loader: 'ts' };
    });
  },
};

export interface PackResult { tarball: string; version: string }

/** Builds and packs; the tarball's path. */
export async function packRelayNode(outDir = join(ROOT, '.data', 'pack')): Promise<PackResult> {
  const { version } = JSON.parse(readFileSync(join(RELAY, 'package.json'), 'utf8')) as { version: string };
  const stage = join(outDir, 'edgemail-relay-node');
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(join(stage, 'deploy', 'systemd'), { recursive: true });
  await build({
    entryPoints: {
      'edgemail-relay': join(RELAY, 'src/cli/main.ts'),
      // verify-pool.ts starts `./verify-worker.js` beside the module that starts it.
      'verify-worker': join(RELAY, 'src/inbound/mail-auth/verify-worker.ts'),
      // compose-pool.ts starts `./compose-worker.js` the same way.
      'compose-worker': join(RELAY, 'src/outbound/compose-worker.ts'),
    },
    outdir: join(stage, 'dist'),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: false,
    minify: false,
    legalComments: 'external',
    logLevel: 'warning',
    plugins: [inlineCreateRequire],
    // CommonJS dependencies ask for Node's built-ins with require(), which an ES module lacks.
    banner: { js: "import { createRequire as __edgemailCreateRequire } from 'node:module'; const require = __edgemailCreateRequire(import.meta.url);" },
  });
  writeFileSync(join(stage, 'package.json'), `${JSON.stringify({
    name: 'edgemail-relay-node',
    version,
    description: 'edgemail relay node: the SMTP listeners (MX and submission), spool and outbound delivery of an edgemail installation',
    type: 'module',
    bin: { 'edgemail-relay': 'dist/edgemail-relay.js' },
    files: ['dist', 'deploy', 'docs', 'README.md'],
    engines: { node: '>=20.3.0' },
    license: 'UNLICENSED',
  }, null, 2)}\n`);
  copyFileSync(join(ROOT, 'deploy/systemd/edgemail-relay.service'), join(stage, 'deploy/systemd/edgemail-relay.service'));
  mkdirSync(join(stage, 'docs'));
  copyFileSync(join(ROOT, 'docs/operations.md'), join(stage, 'docs/operations.md'));
  copyFileSync(join(RELAY, 'scripts/package-readme.md'), join(stage, 'README.md'));
  // npm pack names it <name>-<version>.tgz and prints that name last.
  const printed = execFileSync('npm', ['pack', '--silent', '--pack-destination', outDir], { cwd: stage, encoding: 'utf8' }).trim().split('\n').at(-1)!;
  return { tarball: join(outDir, printed), version };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { out: { type: 'string' } } });
  const { tarball } = await packRelayNode(values.out ? resolve(values.out) : undefined);
  console.log(tarball);
  mkdirSync(dirname(tarball), { recursive: true });
}
