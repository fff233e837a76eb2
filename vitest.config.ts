import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['{edge,shared,schema,relay-node,test}/**/*.test.ts'],
    exclude: ['**/node_modules/**'],
    globalSetup: ['test/support/global-setup.ts'],
    // Each integration file runs its own Worker (a workerd process); two at a
    // time suits a 2-core machine.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
