// Where the systemd unit the package ships is: `deploy/systemd/` of the
// installed package (beside `dist/`), or of the checkout when run from source.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const CANDIDATES = [
  '../deploy/systemd/edgemail-relay.service', // the package: dist/edgemail-relay.mjs
  '../../../deploy/systemd/edgemail-relay.service', // the checkout: relay-node/src/cli/unit-path.ts
];

/** The unit file's absolute path; throws naming the places looked in when it is not there. */
export function unitPath(): string {
  const paths = CANDIDATES.map((c) => fileURLToPath(new URL(c, import.meta.url)));
  const found = paths.find((p) => existsSync(p));
  if (!found) throw new Error(`the systemd unit is missing from this installation (looked in ${paths.join(', ')})`);
  return found;
}
