// The mail-authentication words a relay node stamps on an inbound message
// (docs/inbound.md lists when each is given). The edge takes any short string
// in their place (inbound-meta.ts), so that a node whose verifier learns a new
// word still has its mail stored; these are the words a node sends today.

/** The RFC 8601 result words a check can give (not every check gives every word). */
export const AUTH_VERDICTS = ['pass', 'fail', 'softfail', 'neutral', 'none', 'temperror', 'permerror', 'policy'] as const;
export type AuthVerdict = (typeof AUTH_VERDICTS)[number];

/** The DMARC policy a From domain publishes (`p=`, or `sp=` for a subdomain). */
export const DMARC_POLICIES = ['none', 'quarantine', 'reject'] as const;
export type DmarcPolicy = (typeof DMARC_POLICIES)[number];
