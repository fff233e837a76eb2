export { Edgemail, EdgemailAdmin } from './client.js';
export * from './errors.js';
export { Paginated, type PagingRule } from './paging.js';
export type { ClientOptions, RequestOptions, RequestSpec } from './transport.js';
export { verifyWebhook, WebhookVerificationError, type VerifyWebhookInput } from './webhooks.js';
export { VERSION } from './version.js';
export type * from './generated/types.js';
