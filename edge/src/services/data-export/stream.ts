// The export as a byte stream: one page of one kind is read when the reader
// asks for more (highWaterMark 0: nothing is read ahead), so the Worker holds
// one page at a time however large the project is.
import { DATA_EXPORT_VERSION, type DataExportType } from '../../contracts/data-export.js';
import { loggableError } from '../../db/errors.js';
import type { ExportContext } from './source.js';
import { EXPORT_SOURCES } from './sources.js';

const line = (value: object) => `${JSON.stringify(value)}\n`;

/** The lines, a page of records per string; never an empty string. */
async function* exportLines(ctx: ExportContext): AsyncGenerator<string> {
  const counts = Object.fromEntries(EXPORT_SOURCES.map((s) => [s.type, 0])) as Record<DataExportType, number>;
  yield line({ type: 'export', version: DATA_EXPORT_VERSION, project_id: ctx.projectId, started_at: new Date().toISOString() });
  for (const source of EXPORT_SOURCES) {
    let cursor: unknown = null;
    do {
      const page = await source.read(ctx, cursor);
      counts[source.type] += page.records.length;
      if (page.records.length) yield page.records.map((data) => line({ type: source.type, data })).join('');
      cursor = page.next;
    } while (cursor !== null);
  }
  yield line({ type: 'end', counts, finished_at: new Date().toISOString() });
}

/** What the last line says when a page could not be read: the reader starts again. */
export const EXPORT_FAILED = 'export failed part way: start it again';

/**
 * Every record of the project as NDJSON (docs/data-export.md). A page that
 * cannot be read ends the body with an `error` line in place of `end` (an
 * errored stream would drop what is queued, and what a reader sees of it
 * depends on the proxies in between), so a reader can always tell a cut-off
 * export: its last line is not `end`.
 */
export function exportProjectData(ctx: ExportContext): ReadableStream<Uint8Array> {
  const lines = exportLines(ctx);
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { value, done } = await lines.next();
        if (done) controller.close();
        else controller.enqueue(encoder.encode(value));
      } catch (e) {
        console.error(`data export of project ${ctx.projectId} failed part way, ended with an error line:`, loggableError(e));
        controller.enqueue(encoder.encode(line({ type: 'error', error: EXPORT_FAILED })));
        controller.close();
      }
    },
    async cancel() {
      await lines.return(undefined);
    },
  }, { highWaterMark: 0 });
}
