// `edgemail-relay dead-letters` (`edgemail relay dead-letters` in a checkout):
// what a relay node's `dead/` folder holds (the messages the edge refused for
// good), read from the node's state directory on its own machine; the node
// need not be running.
import { join } from 'node:path';
import { escapeControls, listDeadLetters } from '../inbound/forwarder/dead-letters.js';
import { spoolDir } from '../state/index.js';

/**
 * `dead-letters [--state-dir <dir>]`: one line per message on stdout
 * (id, bytes, when it was moved, why), oldest first, tab-separated under a
 * header line; the folder and the totals on stderr.
 */
export async function relayDeadLetters(stateDir: string): Promise<void> {
  const spool = spoolDir(stateDir);
  const letters = await listDeadLetters(spool);
  console.log(['id', 'size', 'moved_at', 'reason'].join('\t'));
  // A reason may quote the sender's bytes (an ESC, a newline, a tab): escaped, so
  // it is one line and one column and never a terminal control sequence. A
  // reason stored by an older node may still hold them.
  for (const l of letters) console.log([l.id, l.size, l.buried_at ?? '-', escapeControls(l.reason)].join('\t'));
  const bytes = letters.reduce((sum, l) => sum + l.size, 0);
  console.error(`${letters.length} dead letter${letters.length === 1 ? '' : 's'} (${bytes} bytes of messages) in ${join(spool, 'dead')}: `
    + 'each is <id>.eml (the message as received), <id>.json (its envelope and verdicts) and <id>.reason.txt; '
    + 'remove them once handled (the node counts them against relay_node.spool.max_dead_letter_bytes)');
}
