// Preview (issue 18, "Rendering"): POST /api/v1/templates/{templateId}/versions/{versionId}/preview
// through the real stack: each step of the language fallback, the data
// defaulting to sample_data, a missing variable and a broken template as 422
// naming the problem, HTML escaping, the stylesheet, and another project's ids.
import { beforeAll, describe, expect, test } from 'vitest';
import { useTenantStack } from './support/tenant-stack.js';
import { addStylesheet, addTemplate, addVersion } from './support/template-rows.js';

const env = useTenantStack({ keys: { reader: ['templates:read'], sender: ['emails:write'] } });

let templateId: string;
let versionId: string;
let bareTemplate: string;
let bareVersion: string;
let otherTemplate: string;
let otherVersion: string;

beforeAll(async () => {
  const projectId = env.tenant.project.id as string;
  const stylesheetId = await addStylesheet(env.stack, projectId, 'brand', 'p { color: #123456 }');
  templateId = await addTemplate(env.stack, projectId, 'password-reset', 'en');
  versionId = await addVersion(env.stack, templateId, {
    sampleData: JSON.stringify({ user: { name: 'Sample' }, link: 'https://example.org/r?a=1&b=2' }),
    stylesheetId,
    localizations: [
      { language: 'en', subject: 'Reset for {{user.name}}', html: '<html><head></head><body><p>Hi {{user.name}}, <a href="{{link}}">reset</a></p></body></html>', text: 'Hi {{user.name}}: {{link}}' },
      { language: 'pt', subject: 'Redefinir para {{user.name}}', html: '<p>Olá {{user.name}}</p>', text: 'Olá {{user.name}}' },
      { language: 'de-CH', subject: 'Zurücksetzen {{user.name}}', html: null, text: 'Grüezi {{user.name}}' },
    ],
  });
  bareTemplate = await addTemplate(env.stack, projectId, 'bare', 'en');
  bareVersion = await addVersion(env.stack, bareTemplate, { localizations: [] });
  otherTemplate = await addTemplate(env.stack, env.other.project.id as string, 'theirs');
  otherVersion = await addVersion(env.stack, otherTemplate, { localizations: [{ language: 'en', subject: 's', text: 't' }] });
});

const preview = (body: unknown, ids: [string, string] = [templateId, versionId], token = env.keys.reader) =>
  env.stack.call('POST', `/api/v1/templates/${ids[0]}/versions/${ids[1]}/preview`, { token, body });

describe('preview', () => {
  test('renders with the sample data when none is given; HTML escaped in html only; the stylesheet in <head> and inlined', async () => {
    const r = await preview({});
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toEqual({
      subject: 'Reset for Sample',
      html: '<html><head><style>p { color: #123456 }</style></head><body><p style="color: #123456;">Hi Sample, <a href="https:&#x2F;&#x2F;example.org&#x2F;r?a&#x3D;1&amp;b&#x3D;2">reset</a></p></body></html>',
      text: 'Hi Sample: https://example.org/r?a=1&b=2',
      language: 'en',
      version: 1,
    });
  });

  test('the data given replaces the sample data, and is escaped in html only', async () => {
    const r = await preview({ data: { user: { name: '<Ann & "Bo">' }, link: 'x' } });
    expect(r.status).toBe(200);
    expect(r.body.subject).toBe('Reset for <Ann & "Bo">');
    expect(r.body.text).toBe('Hi <Ann & "Bo">: x');
    expect(r.body.html).toContain('Hi &lt;Ann &amp; &quot;Bo&quot;&gt;,');
  });

  test.each([
    ['de-CH', 'de-CH', 'Zurücksetzen Sample'], // exact
    ['DE-ch', 'de-CH', 'Zurücksetzen Sample'], // exact, in canonical case
    ['pt-BR', 'pt', 'Redefinir para Sample'], // primary subtag
    ['fr-CA', 'en', 'Reset for Sample'], // the template's default language
  ])('language %s renders %s', async (language, used, subject) => {
    const r = await preview({ language });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect([r.body.language, r.body.subject]).toEqual([used, subject]);
  });

  test('a language that is not BCP 47 is 400 naming it; a version without localizations is 422', async () => {
    const bad = await preview({ language: 'english please' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('invalid request body: language: "english please" is not a BCP 47 language tag');
    const none = await preview({}, [bareTemplate, bareVersion]);
    expect(none.status).toBe(422);
    expect(none.body.error).toMatch(/has no localizations/);
  });

  test('a variable the data lacks is 422 naming it', async () => {
    const r = await preview({ data: { user: {}, link: 'x' } });
    expect(r.status).toBe(422);
    expect(r.body.error).toBe('missing variable: user.name (in subject)');
    const deeper = await preview({ data: { user: { name: 'A' } } });
    expect(deeper.body.error).toBe('missing variable: link (in html)');
  });

  test('data that is not an object is 400', async () => {
    const r = await preview({ data: ['a'] });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/data/);
  });

  test('another project\'s template or version, or a version of another template: 404; the permission is templates:read', async () => {
    expect((await preview({}, [otherTemplate, otherVersion])).status).toBe(404);
    expect((await preview({}, [templateId, otherVersion])).status).toBe(404);
    expect((await preview({}, [templateId, crypto.randomUUID()])).status).toBe(404);
    const denied = await preview({}, [templateId, versionId], env.keys.sender);
    expect([denied.status, denied.body.error]).toEqual([403, 'no access to templates in this project']);
  });
});
