// Types for oidc-provider's own in-memory adapter, which the package does not export
// by name: test/support/oidc-provider.ts passes its factory explicitly, which keeps the
// provider from warning about its "development-only" default adapter.
declare module 'oidc-provider/lib/adapters/memory_adapter.js' {
  import type { AdapterFactory } from 'oidc-provider';
  export function createMemoryAdapter(clockTolerance?: number): AdapterFactory;
}
