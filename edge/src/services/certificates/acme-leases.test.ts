// The edge's own settings decide which hosts may be ordered at all (the route
// tests run with ACME on; these are the refusals of an edge with it off or
// with another host list).
import { describe, expect, it } from 'vitest';
import { loadConfig } from '@edgemail/shared';
import { ServiceError } from '../errors.js';
import { assertAcmeHost, assertAcmeNode } from './acme-leases.js';

const refusal = (fn: () => void) => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ServiceError);
    return [(err as ServiceError).kind, (err as ServiceError).message];
  }
  return null;
};

describe('assertAcmeHost', () => {
  it('refuses while the edge has acme.enabled off, even for a listed host (403)', () => {
    const { config } = loadConfig({ SERVICE_ACME_HOSTS: 'mx1.example.net' });
    expect(refusal(() => assertAcmeHost(config, 'mx1.example.net'))).toEqual(['forbidden', 'ACME is not enabled on the edge (acme.enabled)']);
  });

  it('refuses a host the edge\'s acme.hosts does not list (409), takes a listed one', () => {
    const { config } = loadConfig({ SERVICE_ACME_ENABLED: 'true', SERVICE_ACME_HOSTS: 'mx1.example.net' });
    expect(refusal(() => assertAcmeHost(config, 'mx2.example.net'))).toEqual(['conflict', 'mx2.example.net is not in the edge\'s acme.hosts']);
    expect(refusal(() => assertAcmeHost(config, 'mx1.example.net'))).toBeNull();
  });
});

describe('assertAcmeNode', () => {
  it('takes installation-wide nodes only', () => {
    expect(refusal(() => assertAcmeNode({ installationWide: false }))).toEqual(['forbidden', 'ACME is run by installation-wide relay nodes only']);
    expect(refusal(() => assertAcmeNode({ installationWide: true }))).toBeNull();
  });
});
