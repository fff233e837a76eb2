// Installation settings (docs/settings.md): reading the effective settings
// (secrets redacted, each value's source), changing those that can change at
// run time and seeing the change on the API within the documented bound,
// refusals that store nothing, removing an override, the security-trail event,
// and the platform credential as the only way in.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runtimeSettings } from '@edgemail/shared';
import { platformToken, seedProject, sessionCookie, startTestStack, type TestStack } from './support/stack.js';
import { awayFromWindowEdge } from './support/wait.js';

let stack: TestStack;
let admin: string;

beforeAll(async () => {
  stack = await startTestStack();
  admin = await platformToken(stack);
});
afterAll(async () => { await stack?.stop(); });

const read = (token = admin) => stack.call('GET', '/api/v1/admin/settings', { token });
const patch = (body: unknown, token = admin) => stack.call('PATCH', '/api/v1/admin/settings', { token, body });
const setting = (settings: { name: string }[], name: string) => settings.find((s) => s.name === name);
const storedRows = async () => (await stack.sql.query('SELECT name, value FROM installation_settings ORDER BY name')).rows;
const settingsEvents = async () => (await stack.sql.query(
  `SELECT category, type, detail, status, actor_id, actor_email, project_id FROM audit_events WHERE type = 'settings.updated' ORDER BY created_at`)).rows;

describe('reading', () => {
  test('every declared setting with its value and source; secrets never shown', async () => {
    const r = await read();
    expect(r.status).toBe(200);
    const text = JSON.stringify(r.body);
    expect(text).not.toContain(stack.databaseUrl);
    expect(text).not.toContain(stack.encryptionKey);
    const { settings } = r.body;
    expect(setting(settings, 'database.url')).toMatchObject({ value: '<redacted>', source: 'environment', secret: true, runtime_changeable: false });
    expect(setting(settings, 'database.crypto.encryption_key')).toMatchObject({ value: '<redacted>', source: 'environment', secret: true, runtime_changeable: false });
    // The test stack sets this one in the environment.
    expect(setting(settings, 'ratelimit.api_per_minute')).toMatchObject({ value: 100000, source: 'environment', secret: false, runtime_changeable: true });
    expect(setting(settings, 'webhook.max_attempts')).toMatchObject({ value: 3, source: 'default', runtime_changeable: false });
    expect(setting(settings, 'console.invitation_ttl')).toMatchObject({ value: 604_800_000, source: 'default', runtime_changeable: true });
  });

  test('a project key (even *) and a browser session are refused', async () => {
    const tenant = await seedProject(stack, admin, 'settings-key');
    const { token } = await tenant.key(['*']);
    for (const r of [await read(token), await patch({ 'ratelimit.api_per_minute': 5 }, token)]) {
      expect(r.status).toBe(403);
      expect(r.body).toEqual({ error: 'admin privileges required' });
    }
    const cookie = await sessionCookie(stack, tenant.user.id);
    const bySession = await stack.call('GET', '/api/v1/admin/settings', { headers: { cookie } });
    expect(bySession.status).toBe(403);
    expect(await storedRows()).toEqual([]);
  });
});

describe('refusals store nothing', () => {
  test.each([
    [{ 'ratelimit.api_per_minute': -1 }, 'ratelimit.api_per_minute', /ratelimit\.api_per_minute: .*(greater|>=|0)/],
    [{ 'ratelimit.api_per_minute': 'lots' }, 'ratelimit.api_per_minute', /expected an integer/],
    [{ 'cors.allowed_origins': ['ftp://example.com'] }, 'cors.allowed_origins', /expected an http\(s\) URL/],
    [{ 'console.invitation_ttl': '1m' }, 'console.invitation_ttl', /console\.invitation_ttl/],
    [{ 'nope.setting': 1 }, 'nope.setting', /nope\.setting: unknown setting/],
    [{ 'database.url': 'postgres://elsewhere/db' }, 'database.url', /database\.url: cannot be changed at run time: set SERVICE_DATABASE_URL in the environment and restart/],
    [{ 'webhook.allow_private_targets': true }, 'webhook.allow_private_targets', /cannot be changed at run time/],
    [{ 'server.public_url': 'https://mail.example.com' }, 'server.public_url', /cannot be changed at run time/],
    // One good value beside a bad one: the good one is not stored either.
    [{ 'ratelimit.login_per_minute': 5, 'inbound.max_sessions': 1 }, 'inbound.max_sessions', /inbound\.max_sessions: cannot be changed at run time/],
  ])('%j', async (body, name, message) => {
    const r = await patch(body);
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(message);
    expect(Object.keys(r.body.fields ?? {})).toContain(name);
    expect(await storedRows()).toEqual([]);
  });

  test('an empty change is refused', async () => {
    const r = await patch({});
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/no settings given/);
  });

  test('no event is written for a refusal', async () => {
    expect(await settingsEvents()).toEqual([]);
  });
});

describe('changing', () => {
  test('a duration in its text form, stored as JSON; an override removed with null', async () => {
    const r = await patch({ 'console.invitation_ttl': '2h', 'cors.allowed_origins': 'https://console.example.com, https://ops.example.com' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ set: ['console.invitation_ttl', 'cors.allowed_origins'], removed: [] });
    expect(setting(r.body.settings, 'console.invitation_ttl')).toMatchObject({ value: 7_200_000, source: 'runtime' });
    expect(setting(r.body.settings, 'cors.allowed_origins')).toMatchObject({ value: ['https://console.example.com', 'https://ops.example.com'], source: 'runtime' });
    expect(await storedRows()).toEqual([
      { name: 'console.invitation_ttl', value: '7200000' },
      { name: 'cors.allowed_origins', value: '["https://console.example.com","https://ops.example.com"]' },
    ]);

    const removed = await patch({ 'console.invitation_ttl': null, 'cors.allowed_origins': null });
    expect(removed.body).toMatchObject({ set: [], removed: ['console.invitation_ttl', 'cors.allowed_origins'] });
    expect(setting(removed.body.settings, 'console.invitation_ttl')).toMatchObject({ value: 604_800_000, source: 'default' });
    expect(await storedRows()).toEqual([]);

    // Each change in the acting credential's security trail: the names, never a value.
    expect(await settingsEvents()).toEqual([
      { category: 'security', type: 'settings.updated', detail: 'set: console.invitation_ttl, cors.allowed_origins', status: 200, actor_id: expect.any(String), actor_email: 'admin api key ops', project_id: null },
      { category: 'security', type: 'settings.updated', detail: 'removed: console.invitation_ttl, cors.allowed_origins', status: 200, actor_id: expect.any(String), actor_email: 'admin api key ops', project_id: null },
    ]);
  });

  test('a lowered API rate limit holds on the API within the 10 s bound, and lifting it restores the environment\'s', async () => {
    const tenant = await seedProject(stack, admin, 'settings-limit');
    // Keys made before the limit drops (the platform credential is limited too once it does).
    const keys = await Promise.all(Array.from({ length: 25 }, () => tenant.key(['*'])));
    const burst = async () => {
      const { token } = keys.shift()!;
      await awayFromWindowEdge(3_000);
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await stack.call('GET', '/api/v1/domains', { token })).status);
      return statuses;
    };
    // A fresh key's burst once a second until its third request gets `third` (at most 12 tries: past the bound).
    const burstUntil = async (third: number) => {
      let statuses: number[] = [];
      for (let i = 0; i < 12; i++) {
        statuses = await burst();
        if (statuses[2] === third) break;
        await new Promise((r) => setTimeout(r, 1_000));
      }
      return statuses;
    };
    expect(await burst()).toEqual([200, 200, 200]);

    const lowered = await patch({ 'ratelimit.api_per_minute': 2 });
    expect(lowered.status).toBe(200);
    expect(setting(lowered.body.settings, 'ratelimit.api_per_minute')).toMatchObject({ value: 2, source: 'runtime' });
    expect(await burstUntil(429)).toEqual([200, 200, 429]);

    // A fresh credential (the first one may have spent its two requests of this minute).
    const lifted = await patch({ 'ratelimit.api_per_minute': null }, await platformToken(stack, { name: 'ops-2' }));
    expect(lifted.status, JSON.stringify(lifted.body)).toBe(200);
    expect(setting(lifted.body.settings, 'ratelimit.api_per_minute')).toMatchObject({ value: 100000, source: 'environment' });
    expect(await burstUntil(200)).toEqual([200, 200, 200]);
    expect((await settingsEvents()).slice(-2).map((e) => [e.detail, e.actor_email])).toEqual([
      ['set: ratelimit.api_per_minute', 'admin api key ops'],
      ['removed: ratelimit.api_per_minute', 'admin api key ops-2'],
    ]);
  }, 60_000);
});

test('docs/settings.md names every setting changeable at run time', () => {
  const docs = readFileSync(new URL('../docs/settings.md', import.meta.url), 'utf8');
  for (const name of runtimeSettings) expect(docs, name).toContain(`\`${name}\``);
});
