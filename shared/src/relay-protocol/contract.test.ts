import { describe, expect, it } from 'vitest';
import { contractRefusal, readContractHeader, servedContracts } from './contract.js';

describe('the relay contract version', () => {
  it('no header is contract 1 (nodes older than it); a header is a whole number from 1', () => {
    expect(readContractHeader(undefined)).toEqual({ ok: true, version: 1 });
    expect(readContractHeader(' 3 ')).toEqual({ ok: true, version: 3 });
    for (const bad of ['0', '-1', '1.5', 'two', '', '1234567']) expect(readContractHeader(bad).ok, bad).toBe(false);
  });

  it('a served contract is not refused; a refusal names the served range and the side to upgrade', () => {
    expect(contractRefusal(2, 1, 3)).toBeNull();
    expect(contractRefusal(1, 2, 3)).toBe('relay contract 1 is not served: this edge serves contracts 2 to 3; upgrade the node');
    expect(contractRefusal(4, 2, 3)).toBe('relay contract 4 is not served: this edge serves contracts 2 to 3; upgrade the edge first (or run a node of contract 3)');
    expect(contractRefusal(2, 1, 1)).toBe('relay contract 2 is not served: this edge serves contract 1; upgrade the edge first (or run a node of contract 1)');
    expect(servedContracts(1, 1)).toBe('1');
  });
});
