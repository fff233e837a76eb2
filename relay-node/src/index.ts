// The relay node's public surface: what the operator binary, `pnpm dev` and
// the integration tests use.
export { startRelayNode, type RelayNode, type RelayNodeOptions } from './node.js';
export { enrollNode, AlreadyEnrolledError, type EnrollOptions } from './enroll.js';
export { createConsoleLog } from './console-log.js';
export { createEdgeClient, retrying, type EdgeClient, type EdgeClientOptions } from './edge-client.js';
export {
  EdgeError,
  EdgeRateLimitedError,
  EdgeRefusedError,
  EdgeUnavailableError,
  isFatalEdgeError,
  NodeCredentialError,
  NodeRevokedError,
} from './edge-errors.js';
export { defaultStateDir, isEnrolled, NotEnrolledError, readNodeState, spoolDir, type NodeState } from './state/index.js';
export { NODE_VERSION } from './version.js';
export type { Log } from './smtp/types.js';
