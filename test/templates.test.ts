// Templates (issue 18): templates, numbered versions, localizations,
// activation and rollback, and stylesheets, through the real stack (workerd,
// PostgreSQL). Rendering, preview and sending by template have their own files.
import { beforeAll, describe, expect, test } from 'vitest';
import { useTenantStack } from './support/tenant-stack.js';
import { addedEvents, settledAuditEvents } from './support/audit.js';

const env = useTenantStack({
  keys: {
    writer: ['templates:read', 'templates:write', 'templates:delete'],
    reader: ['templates:read'],
  },
});

const UNKNOWN = '0b9b7c1e-4a8a-4c55-9d9f-1c3f1e0d2a11';
let otherToken: string;

beforeAll(async () => {
  otherToken = (await env.other.key(['templates:read', 'templates:write', 'templates:delete'])).token;
});

const call = (method: string, path: string, body?: unknown, token = env.keys.writer) =>
  env.stack.call(method, path, { token, body });

async function newTemplate(name: string, extra: Record<string, unknown> = {}, token = env.keys.writer) {
  const r = await call('POST', '/api/v1/templates', { name, ...extra }, token);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.template as { id: string; name: string; default_language: string; active_version_id: string | null };
}

async function newVersion(templateId: string, body?: unknown) {
  const r = await call('POST', `/api/v1/templates/${templateId}/versions`, body);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.version as { id: string; version: number; created_at: string };
}

const EN = { language: 'en', subject: 'Reset your password', html: '<p>Hi {{name}}</p>', text: 'Hi {{name}}' };

describe('templates', () => {
  test('create, get with versions, list, update, delete', async () => {
    const t = await newTemplate('welcome', { description: 'First mail' });
    expect(t).toMatchObject({ name: 'welcome', description: 'First mail', default_language: 'en', active_version_id: null, highest_version: 0, versions: [] });

    const pt = await newTemplate('boas-vindas', { default_language: 'PT-br' });
    expect(pt.default_language).toBe('pt-BR');

    const list = await call('GET', '/api/v1/templates', undefined, env.keys.reader);
    expect(list.status).toBe(200);
    expect(list.body.templates.map((x: { name: string }) => x.name)).toEqual(expect.arrayContaining(['welcome', 'boas-vindas']));

    const v = await newVersion(t.id);
    const got = await call('GET', `/api/v1/templates/${t.id}`, undefined, env.keys.reader);
    expect(got.status).toBe(200);
    expect(got.body.template.versions).toEqual([expect.objectContaining({ id: v.id, version: 1, active: false, first_activated_at: null })]);

    const patched = await call('PATCH', `/api/v1/templates/${t.id}`, { name: 'welcome-2', default_language: 'de', description: null });
    expect(patched.status).toBe(200);
    expect(patched.body.template).toMatchObject({ name: 'welcome-2', default_language: 'de', description: null });
    expect(patched.body.template.versions).toHaveLength(1);

    expect((await call('DELETE', `/api/v1/templates/${t.id}`)).status).toBe(204);
    expect((await call('GET', `/api/v1/templates/${t.id}`)).status).toBe(404);
    const rows = await env.stack.sql.query('select count(*)::int as n from template_versions where template_id = $1', [t.id]);
    expect(rows.rows[0].n).toBe(0);
  });

  test('a duplicate name is 409 (create and rename), and changes nothing', async () => {
    await newTemplate('dup');
    const other = await newTemplate('dup-2');
    const again = await call('POST', '/api/v1/templates', { name: 'dup' });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('a template named "dup" already exists');
    const rename = await call('PATCH', `/api/v1/templates/${other.id}`, { name: 'dup' });
    expect(rename.status).toBe(409);
    expect((await call('GET', `/api/v1/templates/${other.id}`)).body.template.name).toBe('dup-2');
    // Another project may use the same name.
    await newTemplate('dup', {}, otherToken);
  });

  test('bad names and language tags are 400 naming the field', async () => {
    for (const tag of ['en_US', 'english-language-tag-x', '', 'en US', 'e']) {
      const r = await call('POST', '/api/v1/templates', { name: `bad-${tag}`, default_language: tag });
      expect(r.status, tag).toBe(400);
      expect(r.body.fields).toHaveProperty('default_language');
    }
    const noName = await call('POST', '/api/v1/templates', { description: 'x' });
    expect(noName.status).toBe(400);
    expect(noName.body.fields).toEqual({ name: 'required' });
    const longName = await call('POST', '/api/v1/templates', { name: 'x'.repeat(201) });
    expect(longName.status).toBe(400);
    expect(longName.body.fields.name).toBe('must be at most 200 characters');
  });

  test('another project\'s or an unknown template is 404 on every route', async () => {
    const theirs = await newTemplate('theirs', {}, otherToken);
    const theirVersion = (await call('POST', `/api/v1/templates/${theirs.id}/versions`, {}, otherToken)).body.version;
    for (const id of [theirs.id, UNKNOWN]) {
      const vid = id === theirs.id ? theirVersion.id : UNKNOWN;
      const replies = await Promise.all([
        call('GET', `/api/v1/templates/${id}`),
        call('PATCH', `/api/v1/templates/${id}`, { name: 'mine' }),
        call('GET', `/api/v1/templates/${id}/versions`),
        call('POST', `/api/v1/templates/${id}/versions`, {}),
        call('PATCH', `/api/v1/templates/${id}/versions/${vid}`, { sample_data: '{}' }),
        call('PUT', `/api/v1/templates/${id}/versions/${vid}/localizations`, { localizations: [EN] }),
        call('GET', `/api/v1/templates/${id}/versions/${vid}/localizations`),
        call('POST', `/api/v1/templates/${id}/activate/${vid}`),
        call('DELETE', `/api/v1/templates/${id}/versions/${vid}`),
        call('DELETE', `/api/v1/templates/${id}`),
      ]);
      for (const r of replies) {
        expect(r.status).toBe(404);
        expect(r.body.error).toBe('template not found');
      }
    }
    // Nothing of theirs changed.
    const still = await call('GET', `/api/v1/templates/${theirs.id}`, undefined, otherToken);
    expect(still.body.template).toMatchObject({ name: 'theirs', highest_version: 1, active_version_id: null });
    expect(still.body.template.versions).toHaveLength(1);
  });

  test('the list pages newest first by (created_at, id): no row skipped or repeated, ties included', async () => {
    const made = [await newTemplate('page-a'), await newTemplate('page-b'), await newTemplate('page-c')];
    // Three rows sharing one created_at (with microseconds) across a page boundary.
    await env.stack.sql.query(`update templates set created_at = '2026-01-01T00:00:00.123456Z' where id = any($1::uuid[])`, [made.map((t) => t.id)]);
    const seen: string[] = [];
    let query = '?limit=2';
    for (let pages = 0; pages < 100; pages++) {
      const r = await call('GET', `/api/v1/templates${query}`, undefined, env.keys.reader);
      expect(r.status).toBe(200);
      expect(r.body.templates.length).toBeLessThanOrEqual(2);
      seen.push(...r.body.templates.map((t: { id: string }) => t.id));
      if (!r.body.next) break;
      query = `?limit=2&before=${encodeURIComponent(r.body.next.before)}&before_id=${r.body.next.before_id}`;
    }
    const { rows } = await env.stack.sql.query('select id from templates where project_id = $1 order by created_at desc, id desc', [env.tenant.project.id]);
    expect(seen).toEqual(rows.map((r) => r.id));
    expect(seen).toEqual(expect.arrayContaining(made.map((t) => t.id)));
    const half = await call('GET', `/api/v1/templates?before_id=${made[0]!.id}`);
    expect(half.status).toBe(400);
    expect(half.body.fields).toEqual({ before: 'required with before_id' });
    expect((await call('GET', '/api/v1/templates?offset=2')).status).toBe(400);
    expect((await call('GET', '/api/v1/templates?limit=201')).body.fields).toHaveProperty('limit');
  });

  test('a malformed id is 400 naming it', async () => {
    const r = await call('GET', '/api/v1/templates/not-a-uuid');
    expect(r.status).toBe(400);
    expect(r.body.fields).toHaveProperty('templateId');
  });
});

describe('versions', () => {
  test('numbers are one above the highest ever: never reused, never filling a gap', async () => {
    const t = await newTemplate('numbering');
    // No body at all, and an empty object: both valid.
    const noBody = await env.stack.call('POST', `/api/v1/templates/${t.id}/versions`, { token: env.keys.writer });
    expect(noBody.status).toBe(201);
    expect(noBody.body.version).toMatchObject({ version: 1, stylesheet_id: null, sample_data: null, languages: [] });
    expect(noBody.body.version.created_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    const v2 = await newVersion(t.id, {});
    const v3 = await newVersion(t.id);
    expect([v2.version, v3.version]).toEqual([2, 3]);
    // Deleting the highest does not give its number again; deleting one in the middle leaves its gap.
    expect((await call('DELETE', `/api/v1/templates/${t.id}/versions/${v3.id}`)).status).toBe(204);
    expect((await newVersion(t.id)).version).toBe(4);
    expect((await call('DELETE', `/api/v1/templates/${t.id}/versions/${v2.id}`)).status).toBe(204);
    expect((await newVersion(t.id)).version).toBe(5);
    const list = await call('GET', `/api/v1/templates/${t.id}/versions`, undefined, env.keys.reader);
    expect(list.body.versions.map((v: { version: number }) => v.version)).toEqual([5, 4, 1]);
    // A deleted version is gone for every route.
    expect((await call('GET', `/api/v1/templates/${t.id}/versions/${v3.id}/localizations`)).status).toBe(404);
  });

  test('20 concurrent creates: numbers 1..n exactly, any refusal a 409 saying to retry, no gap, no duplicate', async () => {
    const t = await newTemplate('concurrent');
    const replies = await Promise.all(Array.from({ length: 20 }, () => call('POST', `/api/v1/templates/${t.id}/versions`, {})));
    const created = replies.filter((r) => r.status === 201).map((r) => r.body.version.version as number).sort((a, b) => a - b);
    for (const r of replies.filter((x) => x.status !== 201)) {
      expect(r.status).toBe(409);
      expect(r.body.error).toBe('version number collision, retry');
    }
    expect(created).toEqual(Array.from({ length: created.length }, (_, i) => i + 1));
    const { rows } = await env.stack.sql.query(
      'select (select highest_version from templates where id = $1) as highest, array_agg(version order by version) as versions from template_versions where template_id = $1',
      [t.id],
    );
    expect(rows[0].highest).toBe(created.length);
    expect(rows[0].versions).toEqual(created);
    // The row lock on the template queues them: here every one was created.
    expect(created).toHaveLength(20);
  });

  test('a collision on the unique (template_id, version) index is 409 saying to retry, with nothing half-written', async () => {
    const t = await newTemplate('collision');
    await newVersion(t.id);
    // Only a broken counter could collide; set it back as such a fault would.
    await env.stack.sql.query('update templates set highest_version = 0 where id = $1', [t.id]);
    const r = await call('POST', `/api/v1/templates/${t.id}/versions`, { sample_data: '{"a":1}' });
    expect(r.status).toBe(409);
    expect(r.body.error).toBe('version number collision, retry');
    const { rows } = await env.stack.sql.query(
      'select (select highest_version from templates where id = $1) as highest, count(*)::int as n from template_versions where template_id = $1', [t.id]);
    expect(rows[0]).toEqual({ highest: 0, n: 1 });
  });

  test('sample_data: a string holding JSON; an object or invalid JSON is 400 naming it', async () => {
    const t = await newTemplate('samples');
    const ok = await newVersion(t.id, { sample_data: '{"name":"Ada"}' });
    expect(ok).toMatchObject({ sample_data: '{"name":"Ada"}' });
    const object = await call('POST', `/api/v1/templates/${t.id}/versions`, { sample_data: { name: 'Ada' } });
    expect(object.status).toBe(400);
    expect(object.body.fields.sample_data).toMatch(/not an object/);
    const broken = await call('POST', `/api/v1/templates/${t.id}/versions`, { sample_data: '{name: Ada}' });
    expect(broken.status).toBe(400);
    expect(broken.body.fields.sample_data).toBe('must be a string holding valid JSON');
    const tooBig = await call('POST', `/api/v1/templates/${t.id}/versions`, { sample_data: JSON.stringify('x'.repeat(70_000)) });
    expect(tooBig.status).toBe(400);
    expect(tooBig.body.fields.sample_data).toBe('must be at most 65536 characters');
    const patchObject = await call('PATCH', `/api/v1/templates/${t.id}/versions/${ok.id}`, { sample_data: [1] });
    expect(patchObject.status).toBe(400);
    expect(patchObject.body.fields).toHaveProperty('sample_data');
    // None of the refusals took a number.
    expect((await newVersion(t.id)).version).toBe(2);
    const patched = await call('PATCH', `/api/v1/templates/${t.id}/versions/${ok.id}`, { sample_data: '[1,2]' });
    expect(patched.status).toBe(200);
    expect(patched.body.version).toMatchObject({ sample_data: '[1,2]', version: 1 });
    const cleared = await call('PATCH', `/api/v1/templates/${t.id}/versions/${ok.id}`, { sample_data: null });
    expect(cleared.body.version.sample_data).toBeNull();
  });

  test('stylesheet_id must be this project\'s stylesheet', async () => {
    const t = await newTemplate('styled');
    const mine = (await call('POST', '/api/v1/stylesheets', { name: 'mine', css: 'p{color:red}' })).body.stylesheet;
    const theirs = (await call('POST', '/api/v1/stylesheets', { name: 'theirs', css: 'p{}' }, otherToken)).body.stylesheet;
    for (const id of [theirs.id, UNKNOWN]) {
      const r = await call('POST', `/api/v1/templates/${t.id}/versions`, { stylesheet_id: id });
      expect(r.status).toBe(400);
      expect(r.body.fields).toEqual({ stylesheet_id: 'no such stylesheet in this project' });
    }
    const notUuid = await call('POST', `/api/v1/templates/${t.id}/versions`, { stylesheet_id: 'brand' });
    expect(notUuid.status).toBe(400);
    expect(notUuid.body.fields).toHaveProperty('stylesheet_id');
    const v = await newVersion(t.id, { stylesheet_id: mine.id });
    expect(v).toMatchObject({ version: 1, stylesheet_id: mine.id });
    const patch = await call('PATCH', `/api/v1/templates/${t.id}/versions/${v.id}`, { stylesheet_id: theirs.id });
    expect(patch.status).toBe(400);
    expect((await call('GET', `/api/v1/templates/${t.id}/versions`)).body.versions[0].stylesheet_id).toBe(mine.id);
  });
});

describe('localizations', () => {
  test('PUT replaces the set; languages are canonicalised; GET lists them', async () => {
    const t = await newTemplate('i18n');
    const v = await newVersion(t.id);
    const put = await call('PUT', `/api/v1/templates/${t.id}/versions/${v.id}/localizations`, {
      localizations: [
        { language: 'EN-us', subject: 'Hello', html: '<p>Hello</p>' },
        { language: 'de', subject: 'Hallo', text: 'Hallo' },
      ],
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.localizations).toEqual([
      { language: 'de', subject: 'Hallo', html: null, text: 'Hallo' },
      { language: 'en-US', subject: 'Hello', html: '<p>Hello</p>', text: null },
    ]);
    // The same languages again (the old rows go before the new ones go in), then a smaller set.
    const again = await call('PUT', `/api/v1/templates/${t.id}/versions/${v.id}/localizations`, {
      localizations: [{ language: 'de', subject: 'Hallo!', text: 'Hallo!' }, { language: 'en-US', subject: 'Hi', text: 'Hi' }],
    });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    const one = await call('PUT', `/api/v1/templates/${t.id}/versions/${v.id}/localizations`, { localizations: [EN] });
    expect(one.status).toBe(200);
    const got = await call('GET', `/api/v1/templates/${t.id}/versions/${v.id}/localizations`, undefined, env.keys.reader);
    expect(got.body.localizations).toEqual([{ ...EN }]);
    expect((await call('GET', `/api/v1/templates/${t.id}/versions`)).body.versions[0].languages).toEqual(['en']);
  });

  test('bad sets are 400 naming the problem and leave the stored set as it was', async () => {
    const t = await newTemplate('i18n-bad');
    const v = await newVersion(t.id);
    const path = `/api/v1/templates/${t.id}/versions/${v.id}/localizations`;
    expect((await call('PUT', path, { localizations: [EN] })).status).toBe(200);
    const cases: [unknown, string, string | RegExp][] = [
      [{ localizations: [] }, 'localizations', 'must hold at least one localization'],
      [{}, 'localizations', 'required'],
      [{ localizations: [{ ...EN, language: 'en_GB' }] }, 'localizations.0.language', 'must be a BCP 47 language tag (en, pt-BR)'],
      [{ localizations: [{ ...EN, language: 'en-x-' }] }, 'localizations.0.language', /BCP 47/],
      [{ localizations: [EN, { ...EN, language: 'EN' }] }, 'localizations.1.language', 'language en appears more than once'],
      [{ localizations: [{ language: 'en', subject: 'S' }] }, 'localizations.0.html', 'needs html or text (or both)'],
      [{ localizations: [{ ...EN, subject: '' }] }, 'localizations.0.subject', 'must not be empty'],
      [{ localizations: [{ ...EN, subject: 's'.repeat(999) }] }, 'localizations.0.subject', 'must be at most 998 characters'],
      [{ localizations: [{ ...EN, html: 'h'.repeat(512_001) }] }, 'localizations.0.html', 'must be at most 512000 characters'],
      [{ localizations: [{ ...EN, text: 'a\u0000b' }] }, 'localizations.0.text', 'must not contain NUL characters'],
      [{ localizations: Array.from({ length: 51 }, (_, i) => ({ ...EN, language: `en-${String(100 + i)}` })) }, 'localizations', 'must hold at most 50 localizations'],
    ];
    for (const [body, field, problem] of cases) {
      const r = await call('PUT', path, body);
      expect(r.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(r.body.fields[field], field).toEqual(typeof problem === 'string' ? problem : expect.stringMatching(problem));
    }
    // Larger than server.max_body_bytes (1 MiB): 413 before it is parsed.
    const huge = await call('PUT', path, { localizations: [{ ...EN, html: 'h'.repeat(500_000) }, { ...EN, language: 'de', html: 'h'.repeat(500_000) }, { ...EN, language: 'fr', html: 'h'.repeat(500_000) }] });
    expect(huge.status).toBe(413);
    expect((await call('GET', path)).body.localizations).toEqual([EN]);
  });
});

describe('activation, rollback and immutability', () => {
  test('activate, freeze, roll back exactly; the active version cannot be deleted', async () => {
    const t = await newTemplate('release');
    const v1 = await newVersion(t.id, { sample_data: '{"name":"Ada"}' });
    const p1 = `/api/v1/templates/${t.id}/versions/${v1.id}`;
    expect((await call('PUT', `${p1}/localizations`, { localizations: [EN] })).status).toBe(200);
    // Creating a version changes nothing live.
    expect((await call('GET', `/api/v1/templates/${t.id}`)).body.template.active_version_id).toBeNull();

    const a1 = await call('POST', `/api/v1/templates/${t.id}/activate/${v1.id}`);
    expect(a1.status).toBe(200);
    expect(a1.body.template.active_version_id).toBe(v1.id);
    const listed = a1.body.template.versions[0];
    expect(listed).toMatchObject({ id: v1.id, active: true });
    const firstActivated = listed.first_activated_at as string;
    expect(firstActivated).toMatch(/^\d{4}-/);

    // Frozen: content of an activated version is refused, and stays.
    const frozen = 'version 1 was activated and cannot be changed; create a new version';
    const patch = await call('PATCH', p1, { sample_data: '{}' });
    expect(patch.status).toBe(409);
    expect(patch.body.error).toBe(frozen);
    const put = await call('PUT', `${p1}/localizations`, { localizations: [{ ...EN, subject: 'Changed' }] });
    expect(put.status).toBe(409);
    expect(put.body.error).toBe(frozen);

    const del = await call('DELETE', p1);
    expect(del.status).toBe(409);
    expect(del.body.error).toBe('cannot delete the active version; activate another first');

    const v2 = await newVersion(t.id);
    expect((await call('PUT', `/api/v1/templates/${t.id}/versions/${v2.id}/localizations`, { localizations: [{ ...EN, subject: 'New' }] })).status).toBe(200);
    const a2 = await call('POST', `/api/v1/templates/${t.id}/activate/${v2.id}`);
    expect(a2.body.template.active_version_id).toBe(v2.id);

    // Rollback: v1 again, exactly as it was; its first activation time is kept.
    const back = await call('POST', `/api/v1/templates/${t.id}/activate/${v1.id}`);
    expect(back.status).toBe(200);
    expect(back.body.template.active_version_id).toBe(v1.id);
    const v1Listed = back.body.template.versions.find((v: { id: string }) => v.id === v1.id);
    expect(v1Listed).toMatchObject({ first_activated_at: firstActivated, sample_data: '{"name":"Ada"}', active: true });
    expect((await call('GET', `${p1}/localizations`)).body.localizations).toEqual([EN]);
    // Activating the active one again changes nothing.
    expect((await call('POST', `/api/v1/templates/${t.id}/activate/${v1.id}`)).body.template.active_version_id).toBe(v1.id);

    // v2 is no longer active: it can go (it was activated once, so it stays frozen until then).
    expect((await call('PATCH', `/api/v1/templates/${t.id}/versions/${v2.id}`, { sample_data: '{}' })).status).toBe(409);
    expect((await call('DELETE', `/api/v1/templates/${t.id}/versions/${v2.id}`)).status).toBe(204);
  });

  test('a version of another template, or an unknown one, is 404 and changes nothing', async () => {
    const a = await newTemplate('act-a');
    const b = await newTemplate('act-b');
    const va = await newVersion(a.id);
    const vb = await newVersion(b.id);
    for (const vid of [vb.id, UNKNOWN]) {
      const r = await call('POST', `/api/v1/templates/${a.id}/activate/${vid}`);
      expect(r.status).toBe(404);
      expect(r.body.error).toBe('template version not found');
      for (const [method, suffix, body] of [['PATCH', '', { sample_data: '{}' }], ['DELETE', '', undefined], ['PUT', '/localizations', { localizations: [EN] }], ['GET', '/localizations', undefined]] as const) {
        const x = await call(method, `/api/v1/templates/${a.id}/versions/${vid}${suffix}`, body);
        expect(x.status, `${method} ${suffix}`).toBe(404);
        expect(x.body.error).toBe('template version not found');
      }
    }
    const { rows } = await env.stack.sql.query('select active_version_id, (select first_activated_at from template_versions where id = $2) as fa from templates where id = $1', [a.id, vb.id]);
    expect(rows[0]).toEqual({ active_version_id: null, fa: null });
    expect((await call('POST', `/api/v1/templates/${a.id}/activate/${va.id}`)).status).toBe(200);
  });

  test('activation racing the delete of the same version: one wins, never an activated version deleted', async () => {
    const t = await newTemplate('race');
    const base = await newVersion(t.id);
    expect((await call('POST', `/api/v1/templates/${t.id}/activate/${base.id}`)).status).toBe(200);
    for (let round = 0; round < 10; round++) {
      const v = await newVersion(t.id);
      const [activated, deleted] = await Promise.all([
        call('POST', `/api/v1/templates/${t.id}/activate/${v.id}`),
        call('DELETE', `/api/v1/templates/${t.id}/versions/${v.id}`),
      ]);
      const { rows } = await env.stack.sql.query('select active_version_id from templates where id = $1', [t.id]);
      if (activated.status === 200) {
        // Activated first: the delete saw it active.
        expect(deleted.status).toBe(409);
        expect(rows[0].active_version_id).toBe(v.id);
        expect((await call('POST', `/api/v1/templates/${t.id}/activate/${base.id}`)).status).toBe(200);
      } else {
        expect([activated.status, deleted.status]).toEqual([404, 204]);
        expect(rows[0].active_version_id).toBe(base.id);
      }
    }
  });

  test('deleting a template with an active version takes everything with it', async () => {
    const t = await newTemplate('gone');
    const v = await newVersion(t.id);
    await call('PUT', `/api/v1/templates/${t.id}/versions/${v.id}/localizations`, { localizations: [EN] });
    await call('POST', `/api/v1/templates/${t.id}/activate/${v.id}`);
    expect((await call('DELETE', `/api/v1/templates/${t.id}`)).status).toBe(204);
    const { rows } = await env.stack.sql.query('select count(*)::int as n from template_localizations where version_id = $1', [v.id]);
    expect(rows[0].n).toBe(0);
  });
});

describe('stylesheets', () => {
  test('create, get, list, rename, edit css, delete; 404 across projects; 409 on names', async () => {
    const s = (await call('POST', '/api/v1/stylesheets', { name: 'brand', css: 'p { color: #333; }' }));
    expect(s.status).toBe(201);
    const id = s.body.stylesheet.id as string;
    expect(s.body.stylesheet).toMatchObject({ name: 'brand', css: 'p { color: #333; }' });
    expect((await call('GET', `/api/v1/stylesheets/${id}`, undefined, env.keys.reader)).body.stylesheet.name).toBe('brand');
    expect((await call('GET', '/api/v1/stylesheets', undefined, env.keys.reader)).body.stylesheets.map((x: { id: string }) => x.id)).toContain(id);
    const dup = await call('POST', '/api/v1/stylesheets', { name: 'brand', css: '' });
    expect(dup.status).toBe(409);
    expect(dup.body.error).toBe('a stylesheet named "brand" already exists');
    const big = await call('POST', '/api/v1/stylesheets', { name: 'big', css: 'x'.repeat(100_001) });
    expect(big.status).toBe(400);
    expect(big.body.fields.css).toBe('must be at most 100000 characters');
    const edited = await call('PATCH', `/api/v1/stylesheets/${id}`, { css: 'p { color: #000; }' });
    expect(edited.status).toBe(200);
    expect(edited.body.stylesheet.css).toBe('p { color: #000; }');
    for (const token of [otherToken]) {
      expect((await call('GET', `/api/v1/stylesheets/${id}`, undefined, token)).status).toBe(404);
      expect((await call('PATCH', `/api/v1/stylesheets/${id}`, { css: '' }, token)).status).toBe(404);
      expect((await call('DELETE', `/api/v1/stylesheets/${id}`, undefined, token)).status).toBe(404);
    }
    expect((await call('GET', `/api/v1/stylesheets/${UNKNOWN}`)).body.error).toBe('stylesheet not found');
    expect((await call('DELETE', `/api/v1/stylesheets/${id}`)).status).toBe(204);
    expect((await call('GET', `/api/v1/stylesheets/${id}`)).status).toBe(404);
  });

  test('in use: delete is 409 naming it; css of an activated version\'s stylesheet is frozen', async () => {
    const s = (await call('POST', '/api/v1/stylesheets', { name: 'house', css: 'a{}' })).body.stylesheet;
    const t = await newTemplate('uses-house');
    const v = await newVersion(t.id, { stylesheet_id: s.id });
    const del = await call('DELETE', `/api/v1/stylesheets/${s.id}`);
    expect(del.status).toBe(409);
    expect(del.body.error).toMatch(/^stylesheet "house" is used by template "uses-house" version 1; /);
    // Only a draft uses it: its css may still change.
    expect((await call('PATCH', `/api/v1/stylesheets/${s.id}`, { css: 'a{color:red}' })).status).toBe(200);
    await call('POST', `/api/v1/templates/${t.id}/activate/${v.id}`);
    const css = await call('PATCH', `/api/v1/stylesheets/${s.id}`, { css: 'a{color:blue}' });
    expect(css.status).toBe(409);
    expect(css.body.error).toMatch(/^stylesheet "house" is used by template "uses-house" version 1; its css cannot change/);
    expect((await call('GET', `/api/v1/stylesheets/${s.id}`)).body.stylesheet.css).toBe('a{color:red}');
    // A rename changes no render; the same css again changes nothing either.
    const rename = await call('PATCH', `/api/v1/stylesheets/${s.id}`, { name: 'house-2', css: 'a{color:red}' });
    expect(rename.status).toBe(200);
    expect(rename.body.stylesheet.name).toBe('house-2');
  });
});

describe('audit', () => {
  test('successful writes are recorded with their declared types; a refusal is not (docs/audit.md)', async () => {
    const before = await settledAuditEvents(env.stack, env.admin);
    const t = await newTemplate('audited');
    const v = await newVersion(t.id);
    await call('POST', `/api/v1/templates/${t.id}/activate/${v.id}`);
    expect((await call('DELETE', `/api/v1/templates/${t.id}/versions/${v.id}`)).status).toBe(409);
    const v2 = await newVersion(t.id);
    await call('POST', `/api/v1/templates/${t.id}/activate/${v2.id}`);
    expect((await call('DELETE', `/api/v1/templates/${t.id}/versions/${v.id}`)).status).toBe(204);
    const added = addedEvents(before, await settledAuditEvents(env.stack, env.admin));
    expect(added.map((e) => [e.type, e.status, e.project_id])).toEqual([
      ['template.created', 201, env.tenant.project.id],
      ['template_version.created', 201, env.tenant.project.id],
      ['template.activate', 200, env.tenant.project.id],
      ['template_version.created', 201, env.tenant.project.id],
      ['template.activate', 200, env.tenant.project.id],
      ['template_version.deleted', 204, env.tenant.project.id],
    ]);
  });
});

describe('permissions', () => {
  test('a read-only key reads but cannot write or delete', async () => {
    const t = await newTemplate('perm');
    const w = await call('POST', `/api/v1/templates/${t.id}/versions`, {}, env.keys.reader);
    expect(w.status).toBe(403);
    expect(w.body.error).toBe('permission templates:write required');
    const d = await call('DELETE', `/api/v1/templates/${t.id}`, undefined, env.keys.reader);
    expect(d.body.error).toBe('permission templates:delete required');
    expect((await call('GET', `/api/v1/templates/${t.id}`, undefined, env.keys.reader)).status).toBe(200);
  });
});
