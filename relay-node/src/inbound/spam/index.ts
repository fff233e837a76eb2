// Spam scoring of inbound mail with rspamd (docs/inbound.md, Spam scoring).
export { createRspamdClient, parseCheckv2, SpamCheckError, type CheckSpam, type SpamEnvelope, type SpamFailureReason } from './rspamd-client.js';
export { refusedByEveryProject, withSpamCheck, type SpamCheckOptions } from './spam-check.js';
