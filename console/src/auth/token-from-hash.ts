import { useState } from 'preact/hooks';

/**
 * The `token` of the page's `#token=…` (the mailed links put it after `#`, so
 * it never reaches a server log or a Referer), read once and then taken out
 * of the address bar and history, so it is not left on screen or in a
 * bookmark. It lives only in this component's state.
 */
export function useTokenFromHash(): string | undefined {
  const [token] = useState(() => {
    const value = new URLSearchParams(location.hash.slice(1)).get('token') ?? undefined;
    if (location.hash) history.replaceState(history.state, '', location.pathname + location.search);
    return value || undefined;
  });
  return token;
}
