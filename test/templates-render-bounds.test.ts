// A render is bounded (issue 25, "Template rendering has no bound"): 72 bytes
// of six sections nested over one list render the inside n^6 times (30 MB in
// 460 ms over 12 items; 20 items exhaust an isolate). Through the real stack,
// with the default settings, each route that renders (preview, send-test,
// send and batch by template_id, a version saved through the routes and
// previewed with its sample data) answers 422 naming the bound it crossed,
// and nothing is sent or stored; a template nesting deeper than
// `templates.max_nesting_depth` is refused when its localizations are saved.
import { beforeAll, describe, expect, test } from 'vitest';
import { useTenantStack } from './support/tenant-stack.js';
import { addTemplate, addVersion } from './support/template-rows.js';

const env = useTenantStack({ keys: { sender: ['emails:write'], reader: ['templates:read'], writer: ['templates:write', 'templates:read'], domains: ['domains:write'] } });

const ATTACK = '{{#a}}'.repeat(6) + '{{/a}}'.repeat(6);
const STEPS = 'template render exceeds 100000 steps (templates.max_render_steps)';
const BYTES = 'rendered template exceeds 1048576 bytes (templates.max_rendered_bytes)';
const items = (n: number) => Array.from({ length: n }, (_, i) => `item-${String(i).padStart(5, '0')}`);

let attackTemplate: string;
let attackVersion: string;
let bytesTemplate: string;
let deepTemplate: string;
let deepVersion: string;
let fineTemplate: string;

beforeAll(async () => {
  const projectId = env.tenant.project.id as string;
  const r = await env.stack.call('POST', '/api/v1/domains', { token: env.keys.domains, body: { name: 'acme.test' } });
  expect(r.status).toBe(201);
  await env.stack.sql.query('UPDATE domains SET verified_at = now() WHERE id = $1', [r.body.domain.id]);
  attackTemplate = await addTemplate(env.stack, projectId, 'attack');
  attackVersion = await addVersion(env.stack, attackTemplate, {
    localizations: [{ language: 'en', subject: 'Hello', html: `<p>${ATTACK}</p>`, text: 'hi' }],
    sampleData: JSON.stringify({ a: items(12) }),
    activate: true,
  });
  // Within the steps, past the bytes: 1000 characters at each of 12^6 places.
  bytesTemplate = await addTemplate(env.stack, projectId, 'bytes');
  await addVersion(env.stack, bytesTemplate, { localizations: [{ language: 'en', subject: 'Hello', text: '{{#a}}'.repeat(6) + '{{.}}' + '{{/a}}'.repeat(6) }], activate: true });
  // Stored before the nesting bound existed (written straight into the table): refused when it renders.
  deepTemplate = await addTemplate(env.stack, projectId, 'deep');
  deepVersion = await addVersion(env.stack, deepTemplate, { localizations: [{ language: 'en', subject: 'Hello', text: '{{#a}}'.repeat(9) + 'x' + '{{/a}}'.repeat(9) }], activate: true });
  fineTemplate = await addTemplate(env.stack, projectId, 'fine');
  await addVersion(env.stack, fineTemplate, { localizations: [{ language: 'en', subject: 'Order {{id}}', html: '<ul>{{#items}}<li>{{.}}</li>{{/items}}</ul>' }], activate: true });
});

const messages = async () => (await env.stack.sql.query('SELECT (SELECT count(*) FROM emails)::int AS emails, (SELECT count(*) FROM outbound_messages)::int AS outbound')).rows[0];
const preview = (templateId: string, versionId: string, body: unknown = {}) =>
  env.stack.call('POST', `/api/v1/templates/${templateId}/versions/${versionId}/preview`, { token: env.keys.reader, body });
const send = (body: Record<string, unknown>) =>
  env.stack.call('POST', '/api/v1/emails/send', { token: env.keys.sender, body: { from: 'news@acme.test', to: ['ann@example.org'], ...body } });
const BIG = Array(12).fill('x'.repeat(1000));

describe('the attack template: six sections nested over a 12- and a 20-item list', () => {
  test.each([12, 20])('preview over %i items is 422 naming the step bound', async (n) => {
    const r = await preview(attackTemplate, attackVersion, { data: { a: items(n) } });
    expect([r.status, r.body.error]).toEqual([422, STEPS]);
  });

  test('preview with the version\'s sample data (12 items) is 422 too', async () => {
    const r = await preview(attackTemplate, attackVersion);
    expect([r.status, r.body.error]).toEqual([422, STEPS]);
  });

  test.each([12, 20])('send-test over %i items is 422 and sends nothing', async (n) => {
    const before = await messages();
    const r = await env.stack.call('POST', `/api/v1/templates/${attackTemplate}/send-test`, {
      token: env.keys.sender, body: { from: 'news@acme.test', to: 'qa@example.org', data: { a: items(n) } },
    });
    expect([r.status, r.body.error]).toEqual([422, STEPS]);
    expect(await messages()).toEqual(before);
  });

  test.each([12, 20])('send by template_id over %i items is 422 and sends nothing', async (n) => {
    const before = await messages();
    const r = await send({ template_id: attackTemplate, data: { a: items(n) } });
    expect([r.status, r.body.error]).toEqual([422, STEPS]);
    expect(await messages()).toEqual(before);
  });

  test('a batch naming the attack in one message is 422 naming that message, and sends none of them', async () => {
    const before = await messages();
    const r = await env.stack.call('POST', '/api/v1/emails/batch', { token: env.keys.sender, body: { messages: [
      { from: 'news@acme.test', to: ['a@example.org'], subject: 'Plain', text: 'plain' },
      { from: 'news@acme.test', to: ['b@example.org'], template_id: attackTemplate, data: { a: items(20) } },
    ] } });
    expect([r.status, r.body.error]).toEqual([422, `messages.1: ${STEPS}`]);
    expect(await messages()).toEqual(before);
  });

  test('a version made through the routes (create, put localizations, update its sample data) previews and test-sends as 422', async () => {
    const made = await env.stack.call('POST', `/api/v1/templates/${attackTemplate}/versions`, { token: env.keys.writer, body: { sample_data: JSON.stringify({ a: items(20) }) } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const versionId = made.body.version.id as string;
    // Six deep is within the nesting bound: saved; its renders are what is bounded.
    const put = await env.stack.call('PUT', `/api/v1/templates/${attackTemplate}/versions/${versionId}/localizations`, {
      token: env.keys.writer, body: { localizations: [{ language: 'en', subject: 'Hi', text: ATTACK }] },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect([(await preview(attackTemplate, versionId)).body.error]).toEqual([STEPS]);
    const patched = await env.stack.call('PATCH', `/api/v1/templates/${attackTemplate}/versions/${versionId}`, { token: env.keys.writer, body: { sample_data: JSON.stringify({ a: items(12) }) } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    const r = await preview(attackTemplate, versionId);
    expect([r.status, r.body.error]).toEqual([422, STEPS]);
    const before = await messages();
    const test1 = await env.stack.call('POST', `/api/v1/templates/${attackTemplate}/send-test`, {
      token: env.keys.sender, body: { from: 'news@acme.test', to: 'qa@example.org', version_id: versionId },
    });
    expect([test1.status, test1.body.error]).toEqual([422, STEPS]);
    expect(await messages()).toEqual(before);
  });
});

describe('output bytes and nesting depth', () => {
  test('a render that would write more than templates.max_rendered_bytes is 422 naming it (preview, send), nothing sent', async () => {
    const versionId = (await env.stack.sql.query('SELECT active_version_id FROM templates WHERE id = $1', [bytesTemplate])).rows[0].active_version_id as string;
    const r = await preview(bytesTemplate, versionId, { data: { a: BIG } });
    expect([r.status, r.body.error]).toEqual([422, BYTES]);
    const before = await messages();
    const sent = await send({ template_id: bytesTemplate, data: { a: BIG } });
    expect([sent.status, sent.body.error]).toEqual([422, BYTES]);
    expect(await messages()).toEqual(before);
  });

  test('a stored template nesting deeper than templates.max_nesting_depth is refused when it renders, whatever the data', async () => {
    const r = await preview(deepTemplate, deepVersion, { data: { a: false } });
    expect([r.status, r.body.error]).toEqual([422, 'text nests sections more than 8 deep (templates.max_nesting_depth)']);
    const before = await messages();
    const sent = await send({ template_id: deepTemplate, data: { a: false } });
    expect([sent.status, sent.body.error]).toEqual([422, 'text nests sections more than 8 deep (templates.max_nesting_depth)']);
    expect(await messages()).toEqual(before);
  });

  test('saving localizations nesting deeper than the bound is 422 naming the part and the setting; the old set stays', async () => {
    const made = await env.stack.call('POST', `/api/v1/templates/${attackTemplate}/versions`, { token: env.keys.writer, body: {} });
    const versionId = made.body.version.id as string;
    const url = `/api/v1/templates/${attackTemplate}/versions/${versionId}/localizations`;
    const ok = await env.stack.call('PUT', url, { token: env.keys.writer, body: { localizations: [{ language: 'en', subject: 'Hi', text: 'old' }] } });
    expect(ok.status).toBe(200);
    const deep = '{{#a}}'.repeat(9) + 'x' + '{{/a}}'.repeat(9);
    const r = await env.stack.call('PUT', url, { token: env.keys.writer, body: { localizations: [{ language: 'en', subject: 'Hi', text: 'fine' }, { language: 'de', subject: 'Hallo', html: deep }] } });
    expect(r.status, JSON.stringify(r.body)).toBe(422);
    expect(r.body).toEqual({
      error: 'localizations.1.html nests sections more than 8 deep (templates.max_nesting_depth)',
      fields: { 'localizations.1.html': 'nests sections more than 8 deep (templates.max_nesting_depth)' },
    });
    const stored = await env.stack.call('GET', url, { token: env.keys.writer });
    expect(stored.body.localizations).toEqual([{ language: 'en', subject: 'Hi', html: null, text: 'old' }]);
  });

  test('a well-behaved template renders and sends as before', async () => {
    const r = await send({ template_id: fineTemplate, data: { id: 7, items: items(500) } });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.emails[0].subject).toBe('Order 7');
  });
});
