import type { stylesheets } from '@edgemail/schema';
import type { StylesheetRecord } from '../../contracts/stylesheet.js';

export function presentStylesheet(row: typeof stylesheets.$inferSelect): StylesheetRecord {
  return { id: row.id, name: row.name, css: row.css, created_at: row.createdAt.toISOString(), updated_at: row.updatedAt.toISOString() };
}
