// The relay contract's version (docs/relay-protocol.md, "Versions"): a node
// names the contract it speaks in every request; an edge serves a range of
// them and refuses a node outside it with 426, which the node takes as "wait
// for an upgrade" (never as a refusal of the message it carried).

/** The contract this code speaks. Bumped when a change is one an older side cannot read. */
export const RELAY_CONTRACT_VERSION = 1;

/** The oldest contract an edge of this code still serves. Raised only after every node runs a newer one. */
export const RELAY_CONTRACT_MIN_SERVED = 1;

/** Request header carrying the node's contract version. A node older than the header sends none: contract 1. */
export const RELAY_CONTRACT_HEADER = 'edgemail-relay-contract';

/** The status of a refusal: the same request is refused until one side is upgraded. */
export const RELAY_CONTRACT_REFUSED_STATUS = 426;

export type ContractReading = { ok: true; version: number } | { ok: false; error: string };

/** The header's value as a contract version; none is contract 1 (nodes older than the header). */
export function readContractHeader(value: string | null | undefined): ContractReading {
  if (value === null || value === undefined) return { ok: true, version: 1 };
  const text = value.trim();
  if (!/^\d{1,6}$/.test(text) || Number(text) < 1) return { ok: false, error: `${RELAY_CONTRACT_HEADER} must be a whole number from 1, got ${JSON.stringify(value.slice(0, 40))}` };
  return { ok: true, version: Number(text) };
}

/** `1`, or `1 to 3`. */
export function servedContracts(min = RELAY_CONTRACT_MIN_SERVED, max = RELAY_CONTRACT_VERSION): string {
  return min === max ? `${min}` : `${min} to ${max}`;
}

/**
 * Null when the edge serves `version`; otherwise the refusal the node logs and
 * shows in /readyz, saying which side to upgrade.
 */
export function contractRefusal(version: number, min = RELAY_CONTRACT_MIN_SERVED, max = RELAY_CONTRACT_VERSION): string | null {
  if (version >= min && version <= max) return null;
  const served = `this edge serves ${min === max ? 'contract' : 'contracts'} ${servedContracts(min, max)}`;
  return version < min
    ? `relay contract ${version} is not served: ${served}; upgrade the node`
    : `relay contract ${version} is not served: ${served}; upgrade the edge first (or run a node of contract ${max})`;
}
