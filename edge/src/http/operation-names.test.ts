import { describe, expect, test } from 'vitest';
import { nameOperations, operationNames, type NamedDocument } from './operation-names.js';

const json = (schema: unknown) => ({ '200': { content: { 'application/json': { schema } } } });
const array = { type: 'array' };
const empty = { '204': {} };

/** A document shaped like ours: each path's operations, the answer schema the list/get choice reads. */
const doc = (): NamedDocument => ({
  paths: {
    '/api/v1/emails': { get: { responses: json({ type: 'object', properties: { emails: array, next: { type: 'object' } } }) } },
    '/api/v1/emails/send': { post: { tags: ['Emails'], responses: json({}) } },
    '/api/v1/emails/{id}': { get: { responses: json({ $ref: '#/components/schemas/Email' }) } },
    '/api/v1/emails/{id}/attachments/{idx}': { get: { responses: { '200': { content: { 'application/octet-stream': {} } } } } },
    '/api/v1/inbound-emails': { get: { responses: json({ type: 'object', properties: { inbound_emails: array, next: {} } }) } },
    '/api/v1/inbound-emails/{id}/raw': { get: { responses: { '200': { content: { 'message/rfc822': {} } } } } },
    '/api/v1/api-keys': {
      get: { responses: json({ type: 'object', properties: { api_keys: array } }) },
      post: { responses: json({}) },
    },
    '/api/v1/api-keys/{id}/revoke': { post: { responses: json({}) } },
    '/api/v1/audit-log': { get: { parameters: [{ name: 'offset', in: 'query' }], responses: json({ type: 'object', properties: { events: array } }) } },
    '/api/v1/project/sso': { get: { responses: json({ type: 'object', properties: { domains: array } }) }, put: { responses: json({}) } },
    '/api/v1/project': { delete: { responses: empty } },
    '/api/v1/relay/nodes': { get: { responses: json({ type: 'object', properties: { nodes: array } }) } },
    '/api/v1/webhooks/{id}/deliveries': { get: { responses: json({ type: 'object', properties: { deliveries: array, next: {} } }) } },
    '/api/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver': { post: { responses: json({}) } },
    '/api/v1/webhooks': { get: { responses: json({ type: 'object', properties: { webhooks: array } }) } },
    '/api/v1/templates/{templateId}/versions': { post: { responses: json({}) }, get: { responses: json({ type: 'object', properties: { versions: array } }) } },
    '/api/v1/templates': { get: { responses: json({ type: 'object', properties: { templates: array } }) } },
    '/api/v1/templates/{templateId}/versions/{versionId}/localizations': { put: { responses: json({}) } },
    '/api/v1/admin/users': { get: { responses: json({ type: 'object', properties: { users: array } }) } },
    '/api/v1/admin/users/{id}/password': { put: { responses: empty } },
  },
  components: { schemas: { Email: { type: 'object', properties: { to: array } } } },
});

describe('operationNames', () => {
  const names = operationNames(doc(), '/api/v1/');
  test.each([
    ['get /api/v1/emails', 'emails_list'],
    ['post /api/v1/emails/send', 'emails_send'],
    ['get /api/v1/emails/{id}', 'emails_get'],
    ['get /api/v1/emails/{id}/attachments/{idx}', 'emails_getAttachment'],
    ['get /api/v1/inbound-emails', 'inboundEmails_list'],
    ['get /api/v1/inbound-emails/{id}/raw', 'inboundEmails_getRaw'],
    ['get /api/v1/api-keys', 'apiKeys_list'],
    ['post /api/v1/api-keys', 'apiKeys_create'],
    ['post /api/v1/api-keys/{id}/revoke', 'apiKeys_revoke'],
    ['get /api/v1/audit-log', 'auditLog_list'],
    ['get /api/v1/project/sso', 'project_getSso'],
    ['put /api/v1/project/sso', 'project_setSso'],
    ['get /api/v1/relay/nodes', 'relayNodes_list'],
    ['get /api/v1/webhooks/{id}/deliveries', 'webhooks_listDeliveries'],
    ['post /api/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver', 'webhooks_redeliver'],
    ['post /api/v1/templates/{templateId}/versions', 'templates_createVersion'],
    ['put /api/v1/templates/{templateId}/versions/{versionId}/localizations', 'templates_setLocalizations'],
    ['get /api/v1/admin/users', 'adminUsers_list'],
    ['put /api/v1/admin/users/{id}/password', 'adminUsers_setPassword'],
  ])('%s → %s', (key, id) => expect(names.get(key)?.operationId).toBe(id));

  test('a lone POST beneath a prefix with no route is an action of the prefix; a path with more on it is a resource', () => {
    const app = operationNames({
      paths: {
        '/app/api/invitations/accept': { post: { responses: json({}) } },
        '/app/api/account/totp': { post: { responses: json({}) }, delete: { responses: empty } },
        '/app/api/account/totp/confirm': { post: { responses: json({}) } },
      },
    }, '/app/api/');
    expect([...app.values()].map((n) => n.operationId)).toEqual(['invitations_accept', 'accountTotp_create', 'accountTotp_delete', 'accountTotp_confirm']);
  });

  test('two operations that would get one name are refused, both named', () => {
    expect(() => operationNames({
      paths: {
        '/api/v1/things/{id}/go': { post: { responses: json({}) } },
        '/api/v1/things/{id}/other/go': { post: { responses: json({}) } },
        '/api/v1/things': { get: { responses: json({}) } },
      },
    }, '/api/v1/')).toThrow('POST /api/v1/things/{id}/other/go and POST /api/v1/things/{id}/go would both be named things_go');
  });
});

describe('nameOperations', () => {
  const titles = {
    emails: { title: 'Emails', description: 'e' }, inboundEmails: { title: 'Inbound emails', description: 'i' },
    apiKeys: { title: 'API keys', description: 'k' }, auditLog: { title: 'Audit log', description: 'a' },
    project: { title: 'Project', description: 'p' }, relayNodes: { title: 'Relay nodes', description: 'r' },
    webhooks: { title: 'Webhooks', description: 'w' }, templates: { title: 'Templates', description: 't' },
    adminUsers: { title: 'Admin: users', description: 'u' },
  };

  test('each operation gets its id and its resource\'s one tag, replacing the declared one; the document lists the tags used, project first', () => {
    const d = doc();
    nameOperations(d, '/api/v1/', titles);
    const send = (d.paths['/api/v1/emails/send'] as any).post;
    expect(send).toMatchObject({ operationId: 'emails_send', tags: ['Emails'] });
    expect((d.paths['/api/v1/admin/users/{id}/password'] as any).put.tags).toEqual(['Admin: users']);
    expect(d.tags?.map((t) => t.name)).toEqual(['API keys', 'Audit log', 'Emails', 'Inbound emails', 'Project', 'Relay nodes', 'Templates', 'Webhooks', 'Admin: users']);
    expect(d.tags?.[0]).toEqual({ name: 'API keys', description: 'k' });
  });

  test('a resource with no title is refused, naming it and where titles live', () => {
    const { relayNodes: _, ...missing } = titles;
    expect(() => nameOperations(doc(), '/api/v1/', missing)).toThrow('GET /api/v1/relay/nodes: resource relayNodes has no title and description in edge/src/http/resource-tags.ts');
  });
});
