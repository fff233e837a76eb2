// The two halves of a mail address, and its domain in the form domains are
// compared in. Split at the last `@`: a quoted local part may hold an `@`, a
// domain never does.

/**
 * `local@domain` split at its last `@`, both parts as written (either may be
 * empty); null when there is no `@`.
 * @example splitAddress('"a@b"@Example.ORG.') // { local: '"a@b"', domain: 'Example.ORG.' }
 */
export function splitAddress(address: string): { local: string; domain: string } | null {
  const at = address.lastIndexOf('@');
  if (at < 0) return null;
  return { local: address.slice(0, at), domain: address.slice(at + 1) };
}

/**
 * The domain of an address, lower case and without a trailing dot; a text
 * without `@` is taken as a domain already.
 * @example addressDomain('Ann@Example.ORG.') // 'example.org'
 */
export function addressDomain(address: string): string {
  return (splitAddress(address)?.domain ?? address).toLowerCase().replace(/\.$/, '');
}
