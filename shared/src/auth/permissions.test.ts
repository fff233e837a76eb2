import { describe, expect, test } from 'vitest';
import { allPermissions, judge, permissionListProblem, rolePermissions } from './permissions.js';

describe('judge', () => {
  test('an exact permission is granted', () => expect(judge(['emails:write'], 'emails:write')).toBe('granted'));
  test('another action on the resource is a missing action', () => expect(judge(['emails:read'], 'emails:write')).toBe('missing-action'));
  test('nothing on the resource is no access', () => expect(judge(['webhooks:read'], 'emails:write')).toBe('no-access'));
  test('an empty list grants nothing', () => expect(judge([], 'emails:read')).toBe('no-access'));
  test('* grants every catalogue permission, present and future', () => {
    for (const p of allPermissions) expect(judge(['*'], p)).toBe('granted');
    expect(judge(['*'], 'newresource:read')).toBe('granted');
  });
  test('* never grants the session-only permissions', () => {
    expect(judge(['*'], 'project:delete')).not.toBe('granted');
    expect(judge(['*'], 'sso:write')).not.toBe('granted');
  });
  test('owners may delete the project; admins may not', () => {
    expect(judge(rolePermissions('owner'), 'project:delete')).toBe('granted');
    expect(judge(rolePermissions('admin'), 'project:delete')).not.toBe('granted');
    expect(judge(rolePermissions('member'), 'apikeys:write')).toBe('missing-action');
    expect(judge(rolePermissions('member'), 'apikeys:read')).toBe('granted');
  });
});

describe('permissionListProblem', () => {
  test('catalogue entries pass', () => expect(permissionListProblem(['emails:write', 'data:read'], { allowWildcard: true })).toBeNull());
  test('unknown entries are named', () => expect(permissionListProblem(['emails:write', 'emails:fly'], { allowWildcard: true })).toBe('unknown permission: emails:fly'));
  test('session-only entries are refused by name', () => expect(permissionListProblem(['project:delete'], { allowWildcard: true })).toContain('project:delete'));
  test('custom groups refuse the wildcard', () => expect(permissionListProblem(['*'], { allowWildcard: false })).toContain('*'));
  test('the wildcard stands alone', () => expect(permissionListProblem(['*', 'emails:read'], { allowWildcard: true })).toContain('only entry'));
});
