// The Analytics area (docs/analytics.md): daily outcomes and opens/clicks as
// charts, and usage against the plan's hourly and daily limits, live.
import type { Area } from '../../routes';
import { lazyPage } from '../../routes';

export const area: Area = {
  id: 'analytics',
  label: 'Analytics',
  href: '/analytics',
  group: 'project',
  routes: [{ path: '/analytics', component: lazyPage(() => import('./page')) }],
};
