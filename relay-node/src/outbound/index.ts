// Outbound delivery on the relay node (docs/sending.md): claim, compose and
// sign, route, deliver or capture, report.
export { captureMessage } from './capture.js';
export { classifySendError, outcomeOfCode, replyCode, type AttemptOutcome } from './classify.js';
export { composeMessage, composeSignedMessage, dkimSignMessage, DkimSignError, SIGNED_HEADERS } from './compose.js';
export { ComposedMessages, type ComposedMessagesOptions } from './composed-messages.js';
export { DEFAULT_DELIVERY_TIMEOUTS, deliverMessage, type DeliverOptions, type DeliveryOutcome, type DeliveryTimeouts } from './deliver.js';
export { heloNameFromConfig } from './helo-name.js';
export { processJob, type ProcessJobDeps } from './process-job.js';
export { MAX_TARGETS, type SmtpTarget } from './mx-lookup.js';
export { parseHostPort, planDelivery, type DeliveryPlan, type RouteSettings, type SmtpPlan } from './route.js';
export { describeOutbound, routeSettingsFromConfig } from './settings.js';
export { createOutboundWorker, type OutboundWorker, type OutboundWorkerOptions } from './worker.js';
export * from './transport-pool.js';
export { composeThreadIds, composeThreadsFor, createComposePool, type ComposeInput, type ComposePool, type ComposePoolOptions } from './compose-pool.js';
