// Services that run both in the Worker (Neon HTTP) and in the operator binary
// (node-postgres) take any drizzle PostgreSQL database.
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type * as schema from '@edgemail/schema';

export type AnyDb = PgDatabase<PgQueryResultHKT, typeof schema>;
