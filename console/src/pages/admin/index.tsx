// The Admin area: the platform admin's pages under /admin/* (one component,
// so the unlocked credential survives moving between them; see admin.tsx).
import type { Area } from '../../routes';
import { lazyPage } from '../../routes';

export const area: Area = {
  id: 'admin',
  label: 'Admin',
  href: '/admin',
  group: 'platform',
  routes: [{ path: '/admin/*?', component: lazyPage(() => import('./admin')) }],
};
