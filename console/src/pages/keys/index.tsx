// The Keys area: API keys of the project (docs/api.md "API keys").
import { lazyPage, type Area } from '../../routes';

export const area: Area = {
  id: 'keys',
  label: 'Keys',
  href: '/keys',
  group: 'project',
  routes: [{ path: '/keys', component: lazyPage(() => import('./list')) }],
};
