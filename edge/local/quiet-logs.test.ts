import { describe, expect, it } from 'vitest';
import { isRelayChatter } from './quiet-logs.js';

describe('isRelayChatter', () => {
  it('matches successful relay-channel request lines, coloured or not', () => {
    expect(isRelayChatter('[wrangler:info] POST /relay/v1/outbound/claim 200 OK (10ms)')).toBe(true);
    expect(isRelayChatter('[wrangler:info] GET /relay/v1/domains 304 Not Modified (3ms)')).toBe(true);
    expect(isRelayChatter('\x1b[2m[wrangler:info]\x1b[22m POST /relay/v1/heartbeat \x1b[32m200\x1b[39m OK (12ms)')).toBe(true);
  });

  it('keeps refusals, errors and every other request', () => {
    expect(isRelayChatter('[wrangler:info] POST /relay/v1/inbound 413 Payload Too Large (8ms)')).toBe(false);
    expect(isRelayChatter('[wrangler:info] GET /relay/v1/domains 500 Internal Server Error (83ms)')).toBe(false);
    expect(isRelayChatter('[wrangler:info] POST /api/v1/emails/send 201 Created (40ms)')).toBe(false);
    expect(isRelayChatter('relay node started /relay/v1/ 200 ')).toBe(false);
  });
});
