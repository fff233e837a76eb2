// `edgemail relay dead-letters`: the relay node's own command (the packaged
// `edgemail-relay dead-letters` is the same), on the checkout's state directory.
import { relayDeadLetters as list } from '../../relay-node/src/cli/dead-letters.js';
import { defaultStateDir } from '../../relay-node/src/state/index.js';

/** `relay dead-letters [--state-dir <dir>]`: see relay-node/src/cli/dead-letters.ts. */
export function relayDeadLetters(flags: { 'state-dir'?: string }): Promise<void> {
  return list(flags['state-dir'] ?? defaultStateDir());
}
