// The node's version, as reported at enrolment and in every heartbeat.
import { readFileSync } from 'node:fs';

/** relay-node/package.json's `version`. */
export const NODE_VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
