// The Worker: the HTTP app. Durable Objects and scheduled handlers join here.
import { buildApp } from './app.js';
import type { Bindings } from './env.js';

const app = buildApp();

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Bindings>;
