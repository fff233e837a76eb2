// The Emails area: the live email log and one email's page.
import { lazyPage, type Area } from '../../routes';
import EmailLog from './list';

export const area: Area = {
  id: 'emails',
  label: 'Emails',
  href: '/emails',
  group: 'project',
  routes: [
    { path: '/emails', component: EmailLog },
    { path: '/emails/:id', component: lazyPage(() => import('./detail')) },
  ],
};
