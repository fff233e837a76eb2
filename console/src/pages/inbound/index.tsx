// The Inbound area: received mail, live, and one message.
import { lazyPage, type Area } from '../../routes';

export const area: Area = {
  id: 'inbound',
  label: 'Inbound',
  href: '/inbound',
  group: 'project',
  routes: [
    { path: '/inbound', component: lazyPage(() => import('./list')) },
    { path: '/inbound/:id', component: lazyPage(() => import('./detail')) },
  ],
};
