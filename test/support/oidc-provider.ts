// A real OpenID Connect provider (panva's oidc-provider) on a free port of 127.0.0.1,
// for the OIDC single sign-on tests. Authorization code flow only, PKCE S256 required,
// clients authenticate with client_secret_basic or client_secret_post. Login and consent
// are scripted (`authorize` plays the browser, no HTML), and two hooks let a test make
// the provider lie: ID tokens with rewritten claims but a valid signature, and a JWKS
// that no longer holds the signing key.
import { generateKeyPairSync, randomBytes, randomUUID, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { CompactSign, decodeJwt, decodeProtectedHeader } from 'jose';
import Provider, { type Account, type Configuration } from 'oidc-provider';
import { createMemoryAdapter } from 'oidc-provider/lib/adapters/memory_adapter.js';

export interface OidcAccount { sub: string; email: string; email_verified?: boolean /* default true */; name?: string }
export interface OidcClient { client_id: string; client_secret: string; redirect_uris: string[] }
export interface TestOidcProvider {
  issuer: string;                       // e.g. http://127.0.0.1:<port> (no trailing slash)
  /** Plays the browser at the provider: GET the authorization URL, log in as the account with this `sub`
   *  (scripted: no HTML form), grant the consent (scopes openid email profile), follow the provider's redirects
   *  (keeping the provider's own cookies in a small jar) until it redirects to a URL outside the provider
   *  (the client's redirect_uri); returns that URL (it carries code+state, or error+state). Throws naming the
   *  step if something else happens. Optionally pass `deny: true` to finish the interaction with access_denied. */
  authorize(authorizationUrl: string, sub: string, opts?: { deny?: boolean }): Promise<URL>;
  /** While set, every ID token the token endpoint returns is decoded, its claims passed through `fn`, and
   *  re-signed with the provider's own signing key (same kid, same alg), so the signature stays valid but
   *  the claims lie (tests of aud, iss, nonce, exp checks). `null` turns it off. */
  tamperIdTokens(fn: ((claims: Record<string, unknown>) => Record<string, unknown>) | null): void;
  /** While on, GET of the provider's jwks_uri serves a different, freshly generated public key (same kid),
   *  so ID tokens no longer verify against the published JWKS (test of the signature check). */
  serveForeignJwks(on: boolean): void;
  /** How many requests each provider path has had (e.g. '/token', '/jwks', '/.well-known/openid-configuration'). */
  hits(path: string): number;
  close(): Promise<void>;
}

const INTERACTION_PATH = '/interaction/';
// How `authorize` tells the interaction endpoint who logs in, or that the user refuses.
const LOGIN_AS_HEADER = 'x-test-login-as';
const DENY_HEADER = 'x-test-deny';

/** A throwaway RS256 key pair; the private JWK goes to the provider, the key object to re-signing. */
function rsaSigningKey(kid: string): { privateJwk: Record<string, unknown>; publicJwk: Record<string, unknown>; privateKey: KeyObject } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const meta = { kid, alg: 'RS256', use: 'sig' };
  return {
    privateJwk: { ...privateKey.export({ format: 'jwk' }), ...meta },
    publicJwk: { ...publicKey.export({ format: 'jwk' }), ...meta },
    privateKey,
  };
}

export async function startOidcProvider(opts: { clients: OidcClient[]; accounts: OidcAccount[]; host?: string }): Promise<TestOidcProvider> {
  const host = opts.host ?? '127.0.0.1';
  const accounts = new Map(opts.accounts.map((a) => [a.sub, a]));
  const kid = `test-${randomUUID()}`;
  const signing = rsaSigningKey(kid);
  let tamper: ((claims: Record<string, unknown>) => Record<string, unknown>) | null = null;
  let foreignJwks: string | null = null;
  const hitCounts = new Map<string, number>();

  // The port must be known before the provider (its issuer names it), so listen first.
  let handle: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.writeHead(503).end();
  const server = createServer((req, res) => handle(req, res));
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const issuer = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  const findAccount = async (_ctx: unknown, id: string): Promise<Account | undefined> => {
    const account = accounts.get(id);
    if (!account) return undefined;
    return {
      accountId: id,
      claims: async () => ({
        sub: account.sub,
        email: account.email,
        email_verified: account.email_verified ?? true,
        ...(account.name === undefined ? {} : { name: account.name }),
      }),
    };
  };

  const configuration: Configuration = {
    clients: opts.clients.map((c) => ({
      client_id: c.client_id,
      client_secret: c.client_secret,
      redirect_uris: c.redirect_uris,
      response_types: ['code'],
      grant_types: ['authorization_code'],
      // The provider accepts client_secret_post as well for a client registered with basic.
      token_endpoint_auth_method: 'client_secret_basic',
    })),
    clientAuthMethods: ['client_secret_basic', 'client_secret_post'],
    responseTypes: ['code'],
    pkce: { required: () => true },
    scopes: ['openid', 'email', 'profile'],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    // The ID token of the code flow carries the account's claims too (the edge reads them there).
    conformIdTokenClaims: false,
    findAccount,
    jwks: { keys: [signing.privateJwk] },
    adapter: createMemoryAdapter(),
    // The library's default lifetimes, stated so it does not log a notice for each (ID token: 1 h).
    ttl: { AccessToken: 3600, AuthorizationCode: 60, IdToken: 3600, Interaction: 3600, Session: 3600, Grant: 3600 },
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    interactions: { url: (_ctx, interaction) => `${INTERACTION_PATH}${interaction.uid}` },
    features: {
      devInteractions: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      dPoP: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      resourceIndicators: { enabled: false },
    },
    // Errors as JSON (the default renders HTML and logs a notice on every call).
    renderError: async (ctx, out) => {
      ctx.type = 'json';
      ctx.body = out;
    },
  };
  let provider: Provider;
  try {
    provider = new Provider(issuer, configuration);
  } catch (err) {
    server.close();
    throw err;
  }

  // Rewrites the token endpoint's answer while a tamper function is set: the body is still
  // the object the endpoint built, serialised after this middleware returns.
  provider.use(async (ctx, next) => {
    await next();
    const body = ctx.body as { id_token?: unknown } | undefined;
    if (tamper && ctx.path === '/token' && ctx.status === 200 && typeof body?.id_token === 'string') {
      const header = decodeProtectedHeader(body.id_token);
      const claims = tamper({ ...decodeJwt(body.id_token) });
      const idToken = await new CompactSign(new TextEncoder().encode(JSON.stringify(claims)))
        .setProtectedHeader({ ...header, alg: header.alg ?? 'RS256' })
        .sign(signing.privateKey);
      ctx.body = { ...body, id_token: idToken };
    }
  });

  const callback = provider.callback();

  /** The scripted login and consent screens. */
  async function interaction(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const details = await provider.interactionDetails(req, res);
    if (req.headers[DENY_HEADER]) {
      await provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'the test user refused' }, { mergeWithLastSubmission: false });
      return;
    }
    if (details.prompt.name === 'login') {
      const sub = String(req.headers[LOGIN_AS_HEADER] ?? '');
      if (!accounts.has(sub)) {
        res.writeHead(400, { 'content-type': 'text/plain' }).end(`no test account with sub ${JSON.stringify(sub)}`);
        return;
      }
      await provider.interactionFinished(req, res, { login: { accountId: sub } }, { mergeWithLastSubmission: false });
      return;
    }
    if (details.prompt.name === 'consent') {
      const { accountId } = details.session ?? {};
      const clientId = String(details.params.client_id);
      const grant = details.grantId ? await provider.Grant.find(details.grantId) : new provider.Grant({ accountId, clientId });
      if (!grant) throw new Error(`grant ${details.grantId} not found`);
      const missing = details.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[] };
      if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
      if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
      const grantId = await grant.save();
      await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
      return;
    }
    res.writeHead(400, { 'content-type': 'text/plain' }).end(`unexpected prompt ${details.prompt.name}`);
  }

  handle = (req, res) => {
    const path = new URL(req.url ?? '/', issuer).pathname;
    hitCounts.set(path, (hitCounts.get(path) ?? 0) + 1);
    if (foreignJwks !== null && path === '/jwks' && req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/jwk-set+json' }).end(foreignJwks);
      return;
    }
    if (path.startsWith(INTERACTION_PATH) && req.method === 'GET') {
      interaction(req, res).catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`interaction failed: ${err instanceof Error ? err.message : String(err)}`);
      });
      return;
    }
    void callback(req, res);
  };

  async function authorize(authorizationUrl: string, sub: string, authorizeOpts: { deny?: boolean } = {}): Promise<URL> {
    const jar = new Map<string, string>();
    let url = new URL(authorizationUrl);
    if (url.origin !== new URL(issuer).origin) throw new Error(`authorize: ${url.origin} is not this provider (${issuer})`);
    for (let step = 1; step <= 10; step += 1) {
      const name = url.pathname.startsWith(INTERACTION_PATH) ? 'interaction' : url.pathname;
      const headers: Record<string, string> = {};
      if (jar.size) headers.cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
      if (name === 'interaction') {
        headers[LOGIN_AS_HEADER] = sub;
        if (authorizeOpts.deny) headers[DENY_HEADER] = '1';
      }
      const res = await fetch(url, { redirect: 'manual', headers });
      for (const line of res.headers.getSetCookie()) {
        const [pair = '', ...attributes] = line.split(';');
        const eq = pair.indexOf('=');
        const cookieName = pair.slice(0, eq).trim();
        const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a))
          || attributes.some((a) => /^\s*expires=/i.test(a) && Date.parse(a.split('=')[1] ?? '') < Date.now());
        if (expired) jar.delete(cookieName);
        else jar.set(cookieName, pair.slice(eq + 1).trim());
      }
      const location = res.headers.get('location');
      if (![302, 303].includes(res.status) || !location) {
        throw new Error(`authorize: step ${step} (${name}) answered ${res.status} instead of a redirect: ${(await res.text()).slice(0, 500)}`);
      }
      await res.body?.cancel();
      const next = new URL(location, url);
      if (next.origin !== url.origin) return next;
      url = next;
    }
    throw new Error('authorize: more than 10 redirects inside the provider');
  }

  return {
    issuer,
    authorize,
    tamperIdTokens(fn) {
      tamper = fn;
    },
    serveForeignJwks(on) {
      foreignJwks = on ? JSON.stringify({ keys: [rsaSigningKey(kid).publicJwk] }) : null;
    },
    hits: (path) => hitCounts.get(path) ?? 0,
    async close() {
      const closed = new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
