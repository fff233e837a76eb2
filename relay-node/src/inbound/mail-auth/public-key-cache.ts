// mailauth 4.13 turns a DKIM key record into a public key anew for every
// signature it checks: a joi validation of the base64, a PEM built, parsed
// (`createPublicKey`) and exported again. Under load most messages are signed
// by a few keys, and that work was the verification worker's largest cost
// after loading (a CPU profile of `pnpm bench inbound`). This memoises it per
// record text: the DNS question is still asked for every signature (the node's
// DNS cache answers, with its TTLs), so a changed or removed record takes
// effect at once; only the conversion of a record already seen is skipped.
// Installed before mailauth's DKIM verifier is loaded (it copies the function
// when it loads): importing this module installs it, so verify-worker.ts
// imports it before anything that loads mailauth.
import { createPublicKey } from 'node:crypto';
import { createRequire } from 'node:module';

type GetPublicKey = (type: string, name: string, minBitLength: number | undefined, resolver: (name: string, rrtype: string) => Promise<unknown>) => Promise<unknown>;

/**
 * The converted key as a KeyObject that still reads as its PEM: the verifier
 * hands it to `crypto.verify`, which would otherwise parse the PEM again for
 * every signature, and writes `publicKey.toString()` into its result.
 */
function withKeyObject(converted: unknown): unknown {
  const c = converted as { publicKey?: unknown } | null;
  if (!c || typeof c.publicKey !== 'string') return converted;
  const pem = c.publicKey;
  const key = createPublicKey(pem);
  Object.defineProperty(key, 'toString', { value: () => pem });
  return { ...c, publicKey: key };
}

/** Distinct key records kept; past it the oldest goes. */
const MAX_KEYS = 1000;

const require = createRequire(import.meta.url);

let installed = false;

/** Puts the memo in front of mailauth's `getPublicKey`. Call before anything loads `mailauth`. */
export function cachePublicKeys(): void {
  if (installed) return;
  installed = true;
  const tools = require('mailauth/lib/tools.js') as { getPublicKey: GetPublicKey };
  const convert = tools.getPublicKey;
  const converted = new Map<string, Promise<unknown>>();
  tools.getPublicKey = async (type, name, minBitLength, resolver) => {
    if (!resolver) return convert(type, name, minBitLength, resolver);
    const answer = await resolver(name, 'TXT');
    const key = `${type}\n${minBitLength ?? ''}\n${JSON.stringify(answer)}`;
    const known = converted.get(key);
    if (known) return known;
    // Only a record that converts is kept: a refusal (short key, bad base64) is worked out again, as before.
    const result = convert(type, name, minBitLength, async () => answer).then(withKeyObject);
    converted.set(key, result);
    result.catch(() => converted.delete(key));
    if (converted.size > MAX_KEYS) converted.delete(converted.keys().next().value!);
    return result;
  };
}

cachePublicKeys();
