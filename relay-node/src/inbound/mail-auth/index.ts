export { createAuthenticator, type AuthenticatorOptions } from './authenticate.js';
export { cachingResolver, type DnsCacheOptions } from './dns-cache.js';
export { createDnsResolver, type DnsResolverOptions } from './dns-resolver.js';
export type { AuthContext, AuthenticateMessage, AuthVerdict, DmarcPolicy, InboundAuth, IngestAuthentication } from './verdicts.js';
