// Loaded first by `pnpm dev` (`node --import`), before TypeScript support and
// the stack's modules, so that a Ctrl-C in the very first second already stops
// it visibly: nothing has started yet, so there is nothing to clean up.
// dev.ts replaces this handler with its own as soon as it runs.
const early = () => {
  console.log('\nstopping…');
  process.exit(0);
};
process.on('SIGINT', early);
process.on('SIGTERM', early);
