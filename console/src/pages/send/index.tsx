// The Send area: a test message, plain or from a template.
import { lazyPage, type Area } from '../../routes';

export const area: Area = {
  id: 'send',
  label: 'Send',
  href: '/send',
  group: 'project',
  routes: [{ path: '/send', component: lazyPage(() => import('./page')) }],
};
