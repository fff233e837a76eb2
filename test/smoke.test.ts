import { afterAll, beforeAll, expect, test } from 'vitest';
import { platformToken, seedProject, startTestStack, type TestStack } from './support/stack.js';

let stack: TestStack;
beforeAll(async () => { stack = await startTestStack(); });
afterAll(async () => { await stack?.stop(); });

test('smoke', async () => {
  const admin = await platformToken(stack);
  const { project, key } = await seedProject(stack, admin);
  const k = await key(['apikeys:read']);
  const list = await stack.call('GET', '/api/v1/api-keys', { token: k.token });
  expect(list.status).toBe(200);
  expect(list.body.api_keys).toHaveLength(1);
  expect(project.id).toBeTruthy();
  const echo = await fetch(`${stack.url}/health`, { headers: {} });
  expect(echo.status).toBe(200);
});
