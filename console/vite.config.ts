// The console's build: Preact with the automatic JSX runtime, no framework
// plugin. `pnpm --filter @edgemail/console build` writes console/dist, which
// wrangler.toml's [assets] serves from the Worker's own origin.
import { defineConfig } from 'vite';

export default defineConfig({
  root: import.meta.dirname,
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  resolve: { alias: { react: 'preact/compat', 'react-dom': 'preact/compat' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // The polyfill would be a script of its own; every browser we aim at has modulepreload.
    modulePreload: { polyfill: false },
    // Small assets (icons) as files, never data: URLs: the CSP's img-src is 'self'.
    assetsInlineLimit: 0,
    sourcemap: false,
    target: 'es2022',
  },
});
