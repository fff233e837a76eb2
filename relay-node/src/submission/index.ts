export { createAuthFailures, type AuthFailures } from './auth-failures.js';
export { createSubmissionServer, type SubmissionServerOptions } from './submission-server.js';
export { submissionMaxMessageSize, submissionOptionsFromConfig } from './submission-options.js';
export { createHandover, type Handover } from './handover.js';
export { createLeaseBook, type LeaseBook } from './leases.js';
export { createRecentSubmissions } from './recent.js';
export { restoreAccepted } from './restore.js';
export { isLoopback, SubmissionSmtpServer } from './submission-connection.js';
export type { SubmissionDeps, SubmissionSpoolMeta, SubmissionUser } from './types.js';
