// pnpm dev's request log is wrangler's, one line per request. Relay nodes poll
// the edge (an outbound claim a second, heartbeats, domain lists), and those
// lines drowned everything else (418 of 565 lines of one run). Successful
// relay-channel requests are dropped from the terminal unless `--verbose`;
// their refusals and errors, and every other request, still show. What the
// node did with mail (received, delivered, refused) it logs itself, one line
// each with the ids the API knows.

const ANSI = /\x1b\[[0-9;]*m/g;
const RELAY_CHATTER = /^\[wrangler:info\] (?:GET|POST|PUT) \/relay\/v1\/\S* [23]\d\d /;

/** True for wrangler's log line of a successful `/relay/v1` request. */
export function isRelayChatter(line: string): boolean {
  return RELAY_CHATTER.test(line.replace(ANSI, ''));
}

/** Drops relay chatter from what wrangler prints through `console.info`/`console.log`. */
export function quietRelayChatter(): void {
  for (const method of ['info', 'log'] as const) {
    const print = console[method].bind(console);
    console[method] = (...args: unknown[]) => {
      if (args.length === 1 && typeof args[0] === 'string' && isRelayChatter(args[0])) return;
      print(...args);
    };
  }
}
