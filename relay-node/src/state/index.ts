export {
  defaultStateDir,
  domainsFile,
  isEnrolled,
  nodeStateFile,
  NotEnrolledError,
  readNodeState,
  spoolDir,
  writeNodeState,
  type NodeState,
} from './state-dir.js';
export { ensurePrivateDir, writePrivateFile } from './write-private-file.js';
