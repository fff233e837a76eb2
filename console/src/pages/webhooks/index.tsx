// The Webhooks area: webhooks, their deliveries and attempts. One webhook's
// page is /webhook/:id, not under /webhooks/: the Worker answers /webhooks/*
// itself (providers' callbacks), so a reload there would never reach the console.
import { lazyPage, type Area } from '../../routes';

export const area: Area = {
  id: 'webhooks',
  label: 'Webhooks',
  href: '/webhooks',
  group: 'project',
  routes: [
    { path: '/webhooks', component: lazyPage(() => import('./list')) },
    { path: '/webhook/:id', component: lazyPage(() => import('./detail')) },
  ],
};
