// Sending by template (issue 18): POST /api/v1/emails/send and /batch with
// template_id resolve the template's active version at send time (activation
// effective on the very next send; activating the earlier version again gives
// its content exactly), and POST /api/v1/templates/{id}/send-test sends one
// version through the normal path, marked `origin: test` in the email log.
import { beforeAll, describe, expect, test } from 'vitest';
import { useTenantStack } from './support/tenant-stack.js';
import { activate, addStylesheet, addTemplate, addVersion } from './support/template-rows.js';

const env = useTenantStack({ keys: { sender: ['emails:write', 'emails:read'], templater: ['templates:write', 'templates:read'], domains: ['domains:write'] } });

let templateId: string;
let v1: string;
let v2: string;
let draft: string;
let inactiveTemplate: string;
let otherTemplate: string;

const V1 = { language: 'en', subject: 'Reset, {{name}}', html: '<p>v1 {{name}}</p>', text: 'v1 {{name}}' };
const V2 = { language: 'en', subject: 'Your reset link, {{name}}', html: '<p>v2 <b>{{name}}</b></p>', text: 'v2 {{name}}' };

beforeAll(async () => {
  const projectId = env.tenant.project.id as string;
  const r = await env.stack.call('POST', '/api/v1/domains', { token: env.keys.domains, body: { name: 'acme.test' } });
  expect(r.status).toBe(201);
  await env.stack.sql.query('UPDATE domains SET verified_at = now() WHERE id = $1', [r.body.domain.id]);
  const css = await addStylesheet(env.stack, projectId, 'brand', 'b { color: red }');
  templateId = await addTemplate(env.stack, projectId, 'password-reset');
  v1 = await addVersion(env.stack, templateId, { localizations: [V1, { language: 'pt', subject: 'Redefinir, {{name}}', text: 'v1 pt {{name}}' }], activate: true });
  v2 = await addVersion(env.stack, templateId, { localizations: [V2], stylesheetId: css });
  draft = await addVersion(env.stack, templateId, { localizations: [{ language: 'en', subject: 'Draft {{name}}', text: 'draft {{name}}' }], sampleData: '{"name":"Sample"}' });
  inactiveTemplate = await addTemplate(env.stack, projectId, 'never-activated');
  await addVersion(env.stack, inactiveTemplate, { localizations: [V1] });
  otherTemplate = await addTemplate(env.stack, env.other.project.id as string, 'theirs');
  await addVersion(env.stack, otherTemplate, { localizations: [V1], activate: true });
});

const send = (body: Record<string, unknown>) =>
  env.stack.call('POST', '/api/v1/emails/send', { token: env.keys.sender, body: { from: 'news@acme.test', to: ['ann@example.org'], ...body } });
const logged = async (id: string) => (await env.stack.call('GET', `/api/v1/emails/${id}`, { token: env.keys.sender })).body.email;
const messageCount = async () => (await env.stack.sql.query('SELECT count(*)::int AS n FROM outbound_messages')).rows[0].n as number;

describe('POST /api/v1/emails/send with template_id', () => {
  test('renders the active version; the log holds the rendered content and names the template and version', async () => {
    const r = await send({ template_id: templateId, data: { name: 'Ann & Bo' } });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.emails[0].subject).toBe('Reset, Ann & Bo');
    const entry = await logged(r.body.emails[0].id);
    expect(entry).toMatchObject({ subject: 'Reset, Ann & Bo', html: '<p>v1 Ann &amp; Bo</p>', text: 'v1 Ann & Bo', origin: 'api', template_id: templateId, template_version_id: v1 });
  });

  test('activation is effective on the very next send, and activating v1 again gives v1\'s content exactly', async () => {
    await activate(env.stack, templateId, v2);
    const second = await logged((await send({ template_id: templateId, data: { name: 'Ann' } })).body.emails[0].id);
    expect(second).toMatchObject({ subject: 'Your reset link, Ann', html: '<style>b { color: red }</style><p>v2 <b style="color: red;">Ann</b></p>', text: 'v2 Ann', template_version_id: v2 });
    await activate(env.stack, templateId, v1);
    const third = await logged((await send({ template_id: templateId, data: { name: 'Ann' } })).body.emails[0].id);
    expect([third.subject, third.html, third.text, third.template_version_id]).toEqual(['Reset, Ann', '<p>v1 Ann</p>', 'v1 Ann', v1]);
  });

  test('the active version is kept between sends, yet every change is seen by the very next send: activation and rollback through the route, a new default language, a deleted template', async () => {
    // Sends keep the active version's content per isolate (active-cache.ts); the send's statement checks it is still active.
    const projectId = env.tenant.project.id as string;
    const id = await addTemplate(env.stack, projectId, 'kept-between-sends');
    const a = await addVersion(env.stack, id, { localizations: [{ language: 'en', subject: 'A {{n}}', text: 'a en' }, { language: 'de', subject: 'A de {{n}}', text: 'a de' }], activate: true });
    const b = await addVersion(env.stack, id, { localizations: [{ language: 'en', subject: 'B {{n}}', text: 'b en' }] });
    const subjectOf = async (body: Record<string, unknown>) => {
      const r = await send({ template_id: id, data: { n: 1 }, ...body });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      const entry = await logged(r.body.emails[0].id);
      return `${entry.subject} (${entry.template_version_id === a ? 'a' : entry.template_version_id === b ? 'b' : entry.template_version_id})`;
    };
    const t = (method: string, path: string, body?: unknown) => env.stack.call(method, path, { token: env.keys.templater, body });
    expect(await subjectOf({})).toBe('A 1 (a)');
    expect(await subjectOf({})).toBe('A 1 (a)'); // now from the cache
    expect((await t('POST', `/api/v1/templates/${id}/activate/${b}`)).status).toBe(200);
    expect(await subjectOf({})).toBe('B 1 (b)');
    // A batch after a rollback: every message renders the version active in the statement that writes them.
    expect((await t('POST', `/api/v1/templates/${id}/activate/${a}`)).status).toBe(200);
    const batch = await env.stack.call('POST', '/api/v1/emails/batch', { token: env.keys.sender, body: { messages: [1, 2, 3].map((n) => ({ from: 'news@acme.test', to: [`n${n}@example.org`], template_id: id, data: { n } })) } });
    expect(batch.status, JSON.stringify(batch.body)).toBe(201);
    expect(batch.body.messages.map((m: { emails: { subject: string }[] }) => m.emails[0]!.subject)).toEqual(['A 1', 'A 2', 'A 3']);
    // French falls back to the default language: en, then de once the template says so.
    expect(await subjectOf({ language: 'fr' })).toBe('A 1 (a)');
    expect((await t('PATCH', `/api/v1/templates/${id}`, { default_language: 'de' })).status).toBe(200);
    expect(await subjectOf({ language: 'fr' })).toBe('A de 1 (a)');
    await env.stack.sql.query('DELETE FROM templates WHERE id = $1', [id]);
    const gone = await send({ template_id: id, data: { n: 1 } });
    expect([gone.status, gone.body.error]).toEqual([404, `template_id: no template ${id} in this project`]);
  });

  test('language falls back as in preview', async () => {
    const r = await send({ template_id: templateId, language: 'pt-BR', data: { name: 'Ana' } });
    expect(r.status).toBe(201);
    expect((await logged(r.body.emails[0].id)).text).toBe('v1 pt Ana');
  });

  test('refusals name the problem and write nothing', async () => {
    const before = await messageCount();
    const both = await send({ template_id: templateId, subject: 'x', text: 'y' });
    expect(both.status).toBe(400);
    expect(both.body.fields).toEqual({
      subject: 'must not be given with template_id: the template has the content (give one or the other)',
      text: 'must not be given with template_id: the template has the content (give one or the other)',
    });
    const dataAlone = await send({ subject: 'x', text: 'y', data: { a: 1 } });
    expect([dataAlone.status, dataAlone.body.fields]).toEqual([400, { data: 'is only taken with template_id' }]);
    const missing = await send({ template_id: templateId, data: {} });
    expect([missing.status, missing.body.error]).toEqual([422, 'missing variable: name (in subject)']);
    const inactive = await send({ template_id: inactiveTemplate, data: { name: 'A' } });
    expect(inactive.status).toBe(422);
    expect(inactive.body.error).toMatch(new RegExp(`^template ${inactiveTemplate} has no active version`));
    const theirs = await send({ template_id: otherTemplate, data: { name: 'A' } });
    expect([theirs.status, theirs.body.error]).toEqual([404, `template_id: no template ${otherTemplate} in this project`]);
    const badLanguage = await send({ template_id: templateId, language: 'no such tag!', data: { name: 'A' } });
    expect(badLanguage.status).toBe(400);
    expect(await messageCount()).toBe(before);
  });

  test('the batch renders per message and names the message that fails', async () => {
    const from = 'news@acme.test';
    const ok = await env.stack.call('POST', '/api/v1/emails/batch', { token: env.keys.sender, body: { messages: [
      { from, to: ['a@example.org'], template_id: templateId, data: { name: 'A' } },
      { from, to: ['b@example.org'], subject: 'Plain', text: 'plain' },
    ] } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    expect(ok.body.messages.map((m: { emails: { subject: string }[] }) => m.emails[0]!.subject)).toEqual(['Reset, A', 'Plain']);
    const bad = await env.stack.call('POST', '/api/v1/emails/batch', { token: env.keys.sender, body: { messages: [
      { from, to: ['a@example.org'], template_id: templateId, data: { name: 'A' } },
      { from, to: ['b@example.org'], template_id: templateId, data: {} },
    ] } });
    expect([bad.status, bad.body.error]).toEqual([422, 'messages.1: missing variable: name (in subject)']);
  });
});

describe('POST /api/v1/templates/{templateId}/send-test', () => {
  const sendTest = (body: Record<string, unknown>, token = env.keys.sender, id = templateId) =>
    env.stack.call('POST', `/api/v1/templates/${id}/send-test`, { token, body: { from: 'news@acme.test', to: 'qa@example.org', ...body } });

  test('a draft with its sample data, marked test in the log, through the normal path', async () => {
    const r = await sendTest({ version_id: draft });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const [row] = r.body.emails;
    expect(row).toMatchObject({ recipient: 'qa@example.org', subject: 'Draft Sample', status: 'queued', origin: 'test' });
    expect(await logged(row.id)).toMatchObject({ text: 'draft Sample', origin: 'test', template_id: templateId, template_version_id: draft });
    const listed = await env.stack.call('GET', '/api/v1/emails?limit=200', { token: env.keys.sender });
    expect(listed.body.emails.find((e: { id: string }) => e.id === row.id).origin).toBe('test');
  });

  test('without version_id the active version, with the data given', async () => {
    const r = await sendTest({ data: { name: 'Q' } });
    expect(r.status).toBe(201);
    expect(await logged(r.body.emails[0].id)).toMatchObject({ subject: 'Reset, Q', template_version_id: v1, origin: 'test' });
  });

  test('to as an array of one, as the send routes take it', async () => {
    const r = await sendTest({ to: ['QA <qa@example.org>'], version_id: draft });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.emails.map((e: { recipient: string; to: string[] }) => [e.recipient, e.to])).toEqual([['qa@example.org', ['QA <qa@example.org>']]]);
  });

  test('refusals: one address only, a from-domain of the project, the sending permission, 404 for another project\'s template', async () => {
    const before = await messageCount();
    const two = await sendTest({ to: ['a@example.org', 'b@example.org'] });
    expect([two.status, two.body]).toEqual([400, { error: 'invalid request body: to: must be exactly one address: a test goes to one inbox', fields: { to: 'must be exactly one address: a test goes to one inbox' } }]);
    expect((await sendTest({ to: 'a@example.org, b@example.org' })).status).toBe(400);
    const empty = await sendTest({ to: '' });
    expect([empty.status, empty.body.fields]).toEqual([400, { to: 'must be an email address (local@domain)' }]);
    const none = await sendTest({ to: [] });
    expect([none.status, none.body.fields]).toEqual([400, { to: 'must have at least one recipient' }]);
    expect(await messageCount()).toBe(before);
    const foreignFrom = await sendTest({ from: 'x@not-ours.test', version_id: draft });
    expect([foreignFrom.status, Object.keys(foreignFrom.body.fields ?? {})]).toEqual([400, ['from']]);
    const denied = await sendTest({ version_id: draft }, env.keys.templater);
    expect([denied.status, denied.body.error]).toEqual([403, 'no access to emails in this project']);
    expect((await sendTest({}, env.keys.sender, otherTemplate)).status).toBe(404);
    expect((await sendTest({ version_id: v1 }, env.keys.sender, inactiveTemplate)).status).toBe(404);
  });
});

describe('the release flow through the template routes (the issue\'s story)', () => {
  test('draft, localizations, preview, test send, activate; the next send uses it; activating the previous version sends it again unchanged', async () => {
    const t = (method: string, path: string, body?: unknown) => env.stack.call(method, path, { token: env.keys.templater, body });
    const created = await t('POST', '/api/v1/templates', { name: 'welcome-flow', default_language: 'en' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.template.id as string;
    const release = async (localizations: unknown[]) => {
      const v = await t('POST', `/api/v1/templates/${id}/versions`, { sample_data: JSON.stringify({ name: 'Sample' }) });
      expect(v.status, JSON.stringify(v.body)).toBe(201);
      const versionId = v.body.version.id as string;
      expect((await t('PUT', `/api/v1/templates/${id}/versions/${versionId}/localizations`, { localizations })).status).toBe(200);
      return versionId;
    };
    const first = await release([{ language: 'en', subject: 'Welcome, {{name}}', html: '<p>Hello {{name}}</p>', text: 'Hello {{name}}' }, { language: 'pt', subject: 'Bem-vindo, {{name}}', text: 'Olá {{name}}' }]);
    const preview = await t('POST', `/api/v1/templates/${id}/versions/${first}/preview`, { language: 'pt-BR' });
    expect([preview.status, preview.body.subject, preview.body.language]).toEqual([200, 'Bem-vindo, Sample', 'pt']);
    const test1 = await env.stack.call('POST', `/api/v1/templates/${id}/send-test`, { token: env.keys.sender, body: { from: 'news@acme.test', to: 'qa@example.org', version_id: first } });
    expect([test1.status, test1.body.emails?.[0]?.origin]).toEqual([201, 'test']);
    expect((await t('POST', `/api/v1/templates/${id}/activate/${first}`)).status).toBe(200);

    const sendOne = async () => {
      const r = await send({ template_id: id, data: { name: 'Ann' } });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      const e = await logged(r.body.emails[0].id);
      return [e.subject, e.html, e.text, e.template_version_id];
    };
    const v1Content = await sendOne();
    expect(v1Content).toEqual(['Welcome, Ann', '<p>Hello Ann</p>', 'Hello Ann', first]);

    const second = await release([{ language: 'en', subject: 'Welcome aboard, {{name}}', html: '<p>Hi {{name}}!</p>', text: 'Hi {{name}}!' }]);
    expect(await sendOne()).toEqual(v1Content); // a draft changes nothing
    expect((await t('POST', `/api/v1/templates/${id}/activate/${second}`)).status).toBe(200);
    expect(await sendOne()).toEqual(['Welcome aboard, Ann', '<p>Hi Ann!</p>', 'Hi Ann!', second]);
    expect((await t('POST', `/api/v1/templates/${id}/activate/${first}`)).status).toBe(200);
    expect(await sendOne()).toEqual(v1Content);
  });
});
