// Moved: the raw-SMTP reply reader is relay-node/test-support/smtp-raw.ts.
// This re-export only keeps src/spool/spool-smtp.test.ts building until its
// import points there; then delete this file and src/test-support/.
export { smtpReplies } from './smtp-raw.js';
