import { createSecureContext } from 'node:tls';
import { describe, expect, it } from 'vitest';
import type { CertificateBundle } from '@edgemail/shared';
import { collectingLog, type LogLine } from '../../test-support/inbound-harness.js';
import { createCertificateContexts } from './certificate-contexts.js';
import { generateSelfSigned } from './self-signed.js';

describe('certificate contexts', () => {
  it('builds one context per pair when a bundle arrives, reuses it in the next bundle, and skips a pair that does not load', async () => {
    const a = await generateSelfSigned(['a.example.net']);
    const b = await generateSelfSigned(['b.example.net']);
    const logs: LogLine[] = [];
    let built = 0;
    const contexts = createCertificateContexts(collectingLog(logs), (options) => {
      built++;
      return createSecureContext(options);
    });
    const bundle = (generation: number, entries: Record<string, { certificate: string; private_key: string }>): CertificateBundle => ({
      generation, listeners: {}, acme: {}, self_signed: null,
      certificates: Object.fromEntries(Object.entries(entries).map(([name, p]) => [name, { ...p, not_after: a.not_after, kind: 'issued' }])),
    });
    const first = contexts.load(bundle(1, { a, broken: { certificate: b.certificate, private_key: a.private_key }, garbage: { certificate: 'not a pem', private_key: 'no' } }));
    expect([...first.keys()]).toEqual(['a']);
    expect(logs.filter((l) => l.level === 'warn').map((l) => l.fields?.certificate)).toEqual(['broken', 'garbage']);
    const builtAfterFirst = built;
    // `a` under another name and `b` new: `a`'s context is the one already built.
    const second = contexts.load(bundle(2, { renamed: a, b }));
    expect(second.get('renamed')!.context).toBe(first.get('a')!.context);
    expect(built).toBe(builtAfterFirst + 1);
    // Dropped from a bundle, a pair is built again if it comes back (nothing kept forever).
    contexts.load(bundle(3, { b }));
    contexts.load(bundle(4, { a }));
    expect(built).toBe(builtAfterFirst + 2);
  });
});
