// The content of each message of a send, settled before the send's one
// statement: a message with `template_id` is rendered from the template's
// active version (from the isolate's cache, or read now; the send's statement
// checks it is still the active one, so the very next send after an
// activation uses the new one); the others are taken as they are. A refusal names the
// message in a batch (`messages.2: missing variable: name (in html)`).
import type { Db } from '../../db/client.js';
import { ServiceError } from '../errors.js';
import { renderVersion, type VersionReads } from '../templates/render-version.js';
import type { RenderLimits } from '../templates/render.js';
import type { SendMessageInput } from '../../contracts/send.js';
import type { ComposedMessage, KeptHeaders, RenderedFrom } from './plan.js';

/** One message of the request, and how a problem with it is named (`from`, `messages.3.from`). */
export interface SendItem {
  input: SendMessageInput;
  field: (name: string) => string;
  /** Already rendered by the caller (send-test): the input carries the content. */
  renderedFrom?: RenderedFrom;
  /** The client's own `Message-ID` and `Date`, validated (SMTP submission only): the message keeps them. */
  kept?: KeptHeaders;
}

export interface ComposedItem {
  input: ComposedMessage;
  field: (name: string) => string;
  template: RenderedFrom | null;
  kept?: KeptHeaders;
  /** Rendered from the template's active version: what the send's statement checks is still so. */
  active?: ActiveVersion;
}

/** A template's active version and default language as a render used them. */
export interface ActiveVersion { templateId: string; versionId: string; defaultLanguage: string }

/** @param cache `use` the isolate's cached active versions, or `refresh` them (after the statement found one moved) */
export async function composeItems(db: Db, projectId: string, items: SendItem[], limits: RenderLimits, cache: 'use' | 'refresh' = 'use'): Promise<ComposedItem[]> {
  // One read per template and language in a batch: its messages render one version.
  const reads: VersionReads = new Map();
  return Promise.all(items.map(async ({ input, field, renderedFrom, kept }): Promise<ComposedItem> => {
    if (input.template_id === undefined) {
      // The schema required a subject without template_id; a caller that built the input itself set one.
      if (input.subject === undefined) throw new Error('a message without template_id reached the send without a subject');
      return { input: { ...input, subject: input.subject }, field, template: renderedFrom ?? null, kept };
    }
    const templateId = input.template_id;
    try {
      // A live send renders the data given (none is {}): sample data is for previews and tests.
      const out = await renderVersion(db, projectId, { templateId, language: input.language, data: input.data ?? {}, field, limits, cache }, reads);
      const { template_id: _t, language: _l, data: _d, ...rest } = input;
      return {
        input: { ...rest, subject: out.subject, html: out.html ?? undefined, text: out.text ?? undefined },
        field,
        template: { templateId, versionId: out.versionId },
        kept,
        active: { templateId, versionId: out.versionId, defaultLanguage: out.defaultLanguage },
      };
    } catch (e) {
      throw e instanceof ServiceError ? inMessage(e, field, templateId) : e;
    }
  }));
}

/** The refusal, worded for the field that caused it: 404 names `template_id`; a batch's message says which. */
function inMessage(e: ServiceError, field: (name: string) => string, templateId: string): ServiceError {
  const where = field('template_id');
  if (e.kind === 'not_found') return new ServiceError('not_found', `${where}: no template ${templateId} in this project`, { [where]: 'not found' });
  const prefix = where.replace(/\.?template_id$/, '');
  return prefix ? new ServiceError(e.kind, `${prefix}: ${e.message}`, e.fields) : e;
}
