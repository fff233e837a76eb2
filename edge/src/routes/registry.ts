// Every declared route, in one list: the app mounts them and the OpenAPI
// export and the route docs read them.
import { mountable, type MountableRoute } from '../http/define-route.js';
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

// One `mountable` call per module, so each route's handler is checked against its own declaration.
export const apiRoutes: MountableRoute[] = [
  mountable(createApiKey), mountable(listApiKeys), mountable(revokeApiKey), mountable(deleteApiKey),
  mountable(listPermissions), mountable(deleteProject), mountable(listAuditLog),
  mountable(createPlan), mountable(createUser), mountable(listUsers), mountable(createProject),
  mountable(createCredential), mountable(listCredentials), mountable(revokeCredential),
];

/** Console routes (`/app/api`) arrive with the sign-in issue. */
export const appRoutes: MountableRoute[] = [];
