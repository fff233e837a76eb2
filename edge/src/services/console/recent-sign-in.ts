// What a stolen session cookie must not be enough for (docs/console.md,
// "Recent sign-in"): adding, renaming or deleting a way to sign in (a passkey,
// a linked provider) or changing the second factor (TOTP) needs a session
// opened in the last 15 minutes, so the account's owner proves it again rather
// than whoever holds an old cookie.
import { forbidden } from '../errors.js';

export const RECENT_SIGN_IN_MS = 15 * 60_000;

/** 403 unless the session signed in within `RECENT_SIGN_IN_MS`; `action` completes "sign in again to …". */
export function assertRecentSignIn(signedInAt: Date, action: string, now = Date.now()): void {
  if (now - signedInAt.getTime() > RECENT_SIGN_IN_MS) {
    throw forbidden(`sign in again to ${action}: this session signed in more than 15 minutes ago`);
  }
}
