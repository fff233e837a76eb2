// DNS names as a project registers them (one spelling per domain, so that a
// name cannot be registered twice by writing it differently), and as relay
// nodes check the name they give in EHLO.

const LABEL = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;
const MAX_NAME = 253;
const MAX_LABEL = 63;

/**
 * The canonical form of a domain name (lower case, no trailing dot), or the
 * problem with it: labels of 1–63 letters, digits and hyphens, not starting or
 * ending with a hyphen; at least two labels; at most 253 characters; the last
 * label not all digits (that would be an IP address). An internationalised
 * name is written in punycode (`xn--…`).
 *
 * @example normalizeDomainName('Mail.Example.COM.') // { name: 'mail.example.com' }
 */
export function normalizeDomainName(input: string): { name: string } | { problem: string } {
  // eslint-disable-next-line no-control-regex
  if (/[^\x21-\x7e]/.test(input)) {
    return /[^\x00-\x7f]/.test(input)
      ? { problem: 'must be ASCII: write an internationalised name in punycode (xn--…)' }
      : { problem: 'must not contain spaces or control characters' };
  }
  const name = input.toLowerCase().replace(/\.$/, '');
  if (!name) return { problem: 'must not be empty' };
  if (name.length > MAX_NAME) return { problem: `must be at most ${MAX_NAME} characters` };
  const labels = name.split('.');
  if (labels.length < 2) return { problem: 'must have at least two labels (example.com)' };
  for (const label of labels) {
    if (!label) return { problem: 'must not contain an empty label' };
    if (label.length > MAX_LABEL) return { problem: `label "${label.slice(0, 20)}…" is longer than ${MAX_LABEL} characters` };
    if (!LABEL.test(label)) {
      return /^-|-$/.test(label) && /^[a-z0-9-]+$/.test(label)
        ? { problem: `label "${label}" must not start or end with a hyphen` }
        : { problem: `label "${label}" may hold only letters, digits and hyphens` };
    }
  }
  if (/^\d+$/.test(labels.at(-1)!)) return { problem: 'must not end in an all-numeric label (an IP address is not a domain)' };
  return { name };
}
