// The single-use tokens of mailed links (invitations, password resets): 32
// random bytes, base64url; only hex(sha256(token)) is stored, so the table
// alone never lets anyone use a link.
import { base64url, sha256Hex } from '@edgemail/shared';

export async function newMailedToken(): Promise<{ token: string; hash: string }> {
  const token = base64url(crypto.getRandomValues(new Uint8Array(32)));
  return { token, hash: await sha256Hex(token) };
}

export const mailedTokenHash = (token: string) => sha256Hex(token);

/**
 * The console page a link opens, with the token after `#`: a fragment is never
 * sent to a server, so it stays out of access logs and Referer headers.
 */
export const consoleLink = (publicUrl: string, page: string, token: string) =>
  `${publicUrl.replace(/\/+$/, '')}/app/${page}#token=${token}`;
