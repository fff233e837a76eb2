// The Audit area (docs/audit.md): the project's audit log, and the signed-in
// person's own security events ("My security events"; the account pages
// belong to the Account area).
import type { Area } from '../../routes';
import { lazyPage } from '../../routes';

export const area: Area = {
  id: 'audit',
  label: 'Audit',
  href: '/audit',
  group: 'project',
  routes: [
    { path: '/audit', component: lazyPage(() => import('./project-log')) },
    { path: '/audit/security', component: lazyPage(() => import('./security-events')) },
  ],
};
