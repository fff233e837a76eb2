// The relay node's public surface: what the operator binary, `pnpm dev` and
// the integration tests use.
export { startRelayNode, type RelayNode, type RelayNodeOptions, type RelayNodeOutboundOptions } from './node.js';
export { enrollNode, AlreadyEnrolledError, type EnrollOptions } from './enroll.js';
export { createConsoleLog, type ConsoleLogOptions, type Log, type LogLevel } from './log.js';
export { createEdgeClient, type EdgeClient, type EdgeClientOptions } from './edge/client.js';
export { retrying } from './edge/retry.js';
export {
  EdgeError,
  EdgeRateLimitedError,
  EdgeRefusedError,
  EdgeUnavailableError,
  isFatalEdgeError,
  NodeCredentialError,
  NodeRevokedError,
} from './edge/errors.js';
export { defaultStateDir, isEnrolled, NotEnrolledError, readNodeState, spoolDir, type NodeState } from './state/index.js';
export { NODE_VERSION } from './version.js';
export {
  captureMessage,
  composeMessage,
  composeSignedMessage,
  createOutboundWorker,
  deliverMessage,
  dkimSignMessage,
  planDelivery,
  processJob,
  routeSettingsFromConfig,
  type DeliveryOutcome,
  type DeliveryPlan,
  type DeliveryTimeouts,
  type OutboundWorker,
  type OutboundWorkerOptions,
  type ProcessJobDeps,
  type RouteSettings,
} from './outbound/index.js';
export type {
  OutboundAttachment,
  OutboundClaimAnswer,
  OutboundDkim,
  OutboundJob,
  OutboundMessage,
  OutboundOutcome,
  OutboundResult,
  OutboundResultsAnswer,
  OutboundRoute,
} from '@edgemail/shared';
