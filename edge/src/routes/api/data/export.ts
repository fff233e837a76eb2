import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { contentDisposition } from '../../../http/download.js';
import { DATA_EXPORT_MEDIA_TYPE, DATA_EXPORT_TYPES, DataExportLineSchema } from '../../../contracts/data-export.js';
import { PAGE_BODY_BYTES, PAGE_ROWS } from '../../../services/data-export/keyset.js';
import { exportProjectData } from '../../../services/data-export/stream.js';

// zod-openapi's types take every `application/…json…` media type, x-ndjson included, for JSON and would
// want a typed JSON answer; widened to string, the key lets the handler answer with a stream.
const NDJSON: string = DATA_EXPORT_MEDIA_TYPE;

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/data/export',
  permission: 'data:read',
  summary: 'Export every record of the project',
  description: `Streams every record of the project as NDJSON (\`${DATA_EXPORT_MEDIA_TYPE}\`, one JSON object per line; docs/data-export.md). The first line is \`{"type":"export","version":1,"project_id":…,"started_at":…}\`; then one line \`{"type":"<type>","data":{…}}\` per record, \`data\` being the record exactly as the API's own GET returns it, types in this order: ${DATA_EXPORT_TYPES.map((t) => `\`${t}\``).join(', ')}; the last line is \`{"type":"end","counts":{…},"finished_at":…}\`. A response whose last line is not \`end\` is incomplete: a page that could not be read ends it with \`{"type":"error","error":…}\`, a connection lost part way with nothing; start again. Never in it: key tokens or their hashes, webhook secrets, DKIM private keys, SMTP passwords, relay node credentials; raw messages and attachment bytes stay behind their download routes. Each type is read newest first in pages of at most ${PAGE_ROWS} records (and ${PAGE_BODY_BYTES / 1024 / 1024} MiB of message bodies), each page when the client reads on: not one snapshot, so a record changed during the export may appear in its new state, and one created during it may be missing. Keys need \`data:read\` (\`*\` covers it); a session needs a role or group holding it (owners and admins do, plain members do not).`,
  tags: ['Data export'],
  responses: {
    200: {
      description: 'The export, streamed',
      headers: z.object({ 'Content-Disposition': z.string().openapi({ example: 'attachment; filename="edgemail-export-<project id>.ndjson"' }) }),
      content: { [NDJSON]: { schema: DataExportLineSchema } },
    },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  const projectId = c.get('projectId');
  return new Response(exportProjectData({ db: c.get('db'), projectId, settings: c.get('config') }), {
    status: 200,
    headers: {
      'Content-Type': `${DATA_EXPORT_MEDIA_TYPE}; charset=utf-8`,
      'Content-Disposition': contentDisposition(`edgemail-export-${projectId}.ndjson`, 'edgemail-export.ndjson'),
      'Cache-Control': 'private, no-store',
      'X-Content-Type-Options': 'nosniff',
    },
  });
};
