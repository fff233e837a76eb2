// The console's password rule, one for every place a password is set
// (invitation accept, password reset, and any later change). NIST SP 800-63B
// style: length is what counts; no composition rules, which push people to
// predictable patterns. Counted in Unicode code points, so a passphrase in any
// script is measured the way its writer sees it.

export const PASSWORD_MIN_LENGTH = 10;
/** Bounds the work of hashing one request's password; long enough for any passphrase. */
export const PASSWORD_MAX_LENGTH = 128;

/** What is wrong with `password` for the account `email`, or null when it may be set. */
export function passwordProblem(password: string, email: string): string | null {
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH) return `must be at least ${PASSWORD_MIN_LENGTH} characters`;
  if (length > PASSWORD_MAX_LENGTH) return `must be at most ${PASSWORD_MAX_LENGTH} characters`;
  if (password.trim() === '') return 'must not be only spaces';
  if (password.toLowerCase() === email.toLowerCase() || password.toLowerCase() === email.split('@')[0]!.toLowerCase()) {
    return 'must not be the account\'s email address';
  }
  return null;
}

/** The rule in words, for the OpenAPI descriptions and docs/console.md. */
export const PASSWORD_RULE = `${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters, not only spaces, not the account's email address (or its local part)`;
