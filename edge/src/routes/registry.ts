// Every declared route, in one list: the app mounts them and the OpenAPI
// export reads them.
import * as createApiKey from './api/api-keys/create.js';
import * as listApiKeys from './api/api-keys/list.js';
import * as revokeApiKey from './api/api-keys/revoke.js';
import * as deleteApiKey from './api/api-keys/delete.js';
import * as listPermissions from './api/permissions/list.js';
import * as deleteProject from './api/project/delete.js';
import * as listAuditLog from './api/audit-log/list.js';
import * as createPlan from './admin/plans/create.js';
import * as createUser from './admin/users/create.js';
import * as listUsers from './admin/users/list.js';
import * as createProject from './admin/projects/create.js';
import * as createCredential from './admin/credentials/create.js';
import * as listCredentials from './admin/credentials/list.js';
import * as revokeCredential from './admin/credentials/revoke.js';

export const apiRoutes = [
  createApiKey, listApiKeys, revokeApiKey, deleteApiKey, listPermissions, deleteProject, listAuditLog,
  createPlan, createUser, listUsers, createProject, createCredential, listCredentials, revokeCredential,
];

/** Console routes (`/app/api`) arrive with the sign-in issue. */
export const appRoutes: typeof apiRoutes = [];
