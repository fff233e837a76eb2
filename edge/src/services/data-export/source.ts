// What each kind of record the export carries provides: its line type and a
// way to read one page after a cursor.
import type { DataExportType } from '../../contracts/data-export.js';
import type { Db } from '../../db/client.js';
import type { PresentSettings } from '../domains/present.js';

export interface ExportContext {
  db: Db;
  projectId: string;
  /** What record presenters need of the settings (the domains' DNS records name the public host). */
  settings: PresentSettings;
}

export interface Page<C> {
  /** Each record as the API's own GET returns it. */
  records: object[];
  /** Where the next page starts; null after the last. */
  next: C | null;
}

export interface ExportSource<C = unknown> {
  /** The line's `type`. */
  type: DataExportType;
  read(ctx: ExportContext, cursor: C | null): Promise<Page<C>>;
}

/** Declares a source, its cursor type checked against its own reader. */
export const exportSource = <C>(source: ExportSource<C>) => source as ExportSource<unknown>;
