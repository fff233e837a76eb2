// The rule lives in shared/ (relay nodes check their EHLO name with it too).
export { normalizeDomainName } from '@edgemail/shared';
