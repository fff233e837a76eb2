export { createAuthFailures, type AuthFailures } from './auth-failures.js';
export { createSubmissionServer, type SubmissionServerOptions } from './submission-server.js';
export { submissionOptionsFromConfig } from './submission-options.js';
export { isLoopback, SubmissionSmtpServer } from './submission-connection.js';
export type { SubmissionDeps, SubmissionSpoolMeta, SubmissionUser } from './types.js';
