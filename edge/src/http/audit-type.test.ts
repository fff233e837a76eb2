import { expect, test } from 'vitest';
import { auditType } from './audit-type.js';

test.each([
  ['post', '/api/v1/api-keys', 'apikey.created'],
  ['post', '/api/v1/api-keys/{id}/revoke', 'apikey.revoke'],
  ['delete', '/api/v1/api-keys/{id}', 'apikey.deleted'],
  ['post', '/api/v1/smtp-servers/{id}/test', 'smtpserver.test'],
  ['post', '/api/v1/webhooks/{id}/rotate-secret', 'webhook.rotate_secret'],
  ['patch', '/api/v1/templates/{templateId}/versions/{versionId}', 'template_version.updated'],
  ['post', '/api/v1/templates/{templateId}/versions', 'template_version.created'],
  ['post', '/api/v1/templates/{templateId}/activate/{versionId}', 'template.activate'],
  ['delete', '/api/v1/project', 'project.deleted'],
  ['post', '/api/v1/admin/plans', 'plan.created'],
  ['post', '/api/v1/admin/credentials/{id}/revoke', 'credential.revoke'],
  ['post', '/api/v1/inbound-emails/{id}/retry', 'inboundemail.retry'],
  ['put', '/api/v1/templates/{templateId}/versions/{versionId}/localizations', 'template_version_localization.updated'],
  ['get', '/api/v1/api-keys', null],
])('%s %s → %s', (method, path, expected) => expect(auditType(method, path)).toBe(expected));
