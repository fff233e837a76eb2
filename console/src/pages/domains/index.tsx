// The Domains area: sending domains, their DNS records and verification.
import { lazyPage, type Area } from '../../routes';

export const area: Area = {
  id: 'domains',
  label: 'Domains',
  href: '/domains',
  group: 'project',
  routes: [
    { path: '/domains', component: lazyPage(() => import('./list')) },
    { path: '/domains/:id', component: lazyPage(() => import('./detail')) },
  ],
};
