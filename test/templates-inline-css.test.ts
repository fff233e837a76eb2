// Stylesheets inlined into `style` attributes at render time (issue 31 §4,
// docs/template-rendering.md#stylesheets), through the real stack (workerd):
// the preview and a template send carry `style="…"` attributes computed by
// the cascade (specificity, the element's own style, !important), the
// `<style>` block is kept whole with what cannot be inlined (@media, :hover)
// only there, the text part is untouched, and the job a relay node claims
// still has its links rewritten for click tracking and the open pixel.
import { beforeAll, describe, expect, test } from 'vitest';
import { enroll, type EnrolledNode } from './support/relay.js';
import { useTenantStack } from './support/tenant-stack.js';
import { addStylesheet, addTemplate, addVersion } from './support/template-rows.js';

const env = useTenantStack({
  keys: { sender: ['emails:write', 'emails:read', 'templates:read'], admin: ['domains:write', 'relay:write'] },
});

const CSS = 'p { color: #333333; margin: 0 0 12px } .lead { color: #222222 } a.button { color: #ffffff; background-color: #3b82f6 } td.num { text-align: right } '
  + '.note { color: #777777 !important } a:hover { color: #000000 } @media (max-width: 600px) { p { font-size: 18px !important } }';
const OWN = '.lead { color: #111111 }';
const HTML = `<html><head><style>${OWN}</style></head><body><p class="lead">Hi {{name}}</p>`
  + '<table>{{#items}}<tr><td>{{sku}}</td><td class="num">{{price}}</td></tr>{{/items}}</table>'
  + '<p class="note" style="color: red; padding: 2px">Note</p><p><a class="button" href="{{link}}">Open</a></p></body></html>';
const TEXT = 'Hi {{name}}. {{#items}}{{sku}} {{price}}; {{/items}}Open: {{link}}';
const DATA = { name: 'Ann', items: [{ sku: 'A-1', price: '€ 3' }, { sku: 'B-2', price: '€ 4' }], link: 'https://shop.example.org/o/1' };

let templateId: string;
let versionId: string;
let node: EnrolledNode;

beforeAll(async () => {
  const projectId = env.tenant.project.id as string;
  const domain = await env.stack.call('POST', '/api/v1/domains', { token: env.keys.admin, body: { name: 'inline.test' } });
  expect(domain.status).toBe(201);
  await env.stack.sql.query('UPDATE domains SET verified_at = now() WHERE id = $1', [domain.body.domain.id]);
  const tracking = await env.stack.call('PUT', `/api/v1/domains/${domain.body.domain.id}/tracking`, { token: env.keys.admin, body: { opens: true, clicks: true, host: null } });
  expect(tracking.status, JSON.stringify(tracking.body)).toBe(200);
  const stylesheetId = await addStylesheet(env.stack, projectId, 'brand', CSS);
  templateId = await addTemplate(env.stack, projectId, 'receipt');
  versionId = await addVersion(env.stack, templateId, { stylesheetId, activate: true, localizations: [{ language: 'en', subject: 'Receipt for {{name}}', html: HTML, text: TEXT }] });
  node = await enroll(env.stack, env.keys.admin, 'mx-inline');
});

/** The attribute `style` of the first element whose start tag contains `marker`. */
const styleAt = (html: string, marker: string) => new RegExp(`<[^>]*${marker}[^>]*?style="([^"]*)"`).exec(html)?.[1];
/** Its declarations by property (their order in the attribute follows specificity). */
const declarationsAt = (html: string, marker: string) =>
  Object.fromEntries((styleAt(html, marker) ?? '').split(';').filter((d) => d.trim()).map((d) => d.split(':').map((s) => s.trim())));

/** What the stylesheet and the template's own rules make of the rendered HTML (before any tracking). */
function expectInlined(html: string) {
  // The <style> blocks are kept whole: the stylesheet first, then the template's own.
  expect(html).toContain(`<head><style>${CSS}</style><style>${OWN}</style></head>`);
  // The template's own `.lead` wins the tie with the stylesheet's (it comes later); both beat `p`, whose margin stays.
  expect(declarationsAt(html, 'class="lead"')).toEqual({ color: '#111111', margin: '0 0 12px' });
  // The element's own style beats `p`, but not the stylesheet's !important (written plain inline).
  expect(declarationsAt(html, 'class="note"')).toEqual({ color: '#777777', padding: '2px', margin: '0 0 12px' });
  // Rows the list section rendered are styled as rendered; table elements get align too (Outlook).
  expect(html.match(/<td class="num" style="text-align: right;" align="right">€ \d<\/td>/g)).toHaveLength(2);
  // :hover and @media are not inlined anywhere (they live only in the <style>).
  expect(html.replace(/<style>[\s\S]*?<\/style>/g, '')).not.toMatch(/#000000|18px/);
}

describe('stylesheets inlined at render time', () => {
  test('preview: style attributes from the cascade, the <style> kept, the text part untouched', async () => {
    const r = await env.stack.call('POST', `/api/v1/templates/${templateId}/versions/${versionId}/preview`, { token: env.keys.sender, body: { data: DATA } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expectInlined(r.body.html);
    expect(styleAt(r.body.html, 'class="button"')).toBe('color: #ffffff; background-color: #3b82f6;');
    expect(r.body.text).toBe('Hi Ann. A-1 € 3; B-2 € 4; Open: https://shop.example.org/o/1');
  });

  test('HTML without <head>, with a script: the stylesheet first, inlined, the script kept as it was', async () => {
    const projectId = env.tenant.project.id as string;
    const sheet = await addStylesheet(env.stack, projectId, 'purple', 'b { color: rebeccapurple }');
    const t = await addTemplate(env.stack, projectId, 'bare-body');
    const v = await addVersion(env.stack, t, { stylesheetId: sheet, localizations: [{ language: 'en', subject: 'Hi {{name}}', html: '<p>Hello <b>{{name}}</b></p><script>document.title = "ran"</script>' }] });
    const r = await env.stack.call('POST', `/api/v1/templates/${t}/versions/${v}/preview`, { token: env.keys.sender, body: { data: { name: 'Ada' } } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.html).toBe('<style>b { color: rebeccapurple }</style><p>Hello <b style="color: rebeccapurple;">Ada</b></p><script>document.title = "ran"</script>');
  });

  test('a template send: the stored message is inlined, and the claimed job still has tracked links and the pixel', async () => {
    const sent = await env.stack.call('POST', '/api/v1/emails/send', {
      token: env.keys.sender, body: { from: 'shop@inline.test', to: ['ann@example.org'], template_id: templateId, data: DATA },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(201);
    const { rows: [stored] } = await env.stack.sql.query('SELECT m.html, m.text FROM outbound_messages m WHERE m.id = $1', [sent.body.message_id]);
    expectInlined(stored.html);
    expect(stored.text).toBe('Hi Ann. A-1 € 3; B-2 € 4; Open: https://shop.example.org/o/1');

    const claimed = await env.stack.call('POST', '/relay/v1/outbound/claim', { token: node.token, body: { max: 10 } });
    expect(claimed.status, JSON.stringify(claimed.body)).toBe(200);
    const job = (claimed.body.jobs as { email_id: string; message: { html: string; text: string } }[]).find((j) => j.email_id === sent.body.emails[0].id)!;
    expect(job, JSON.stringify(claimed.body)).toBeDefined();
    const html = job.message.html;
    expectInlined(html);
    // The button keeps its inlined style, its href is now a tracked link; the pixel is before </body>.
    expect(html).toMatch(/<a class="button" href="https:\/\/mail\.example\.com\/t\/c\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+" style="color: #ffffff; background-color: #3b82f6;">Open<\/a>/);
    expect(html).toMatch(/<img src="https:\/\/mail\.example\.com\/t\/o\/[^"]+"[^>]*><\/body>/);
    expect(job.message.text).toBe(stored.text);
  });
});
