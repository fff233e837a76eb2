// The Suppressions area (docs/suppressions.md): the project's list, paged by
// address, with its filters; add an entry; remove one.
import type { Area } from '../../routes';
import SuppressionList from './list';

export const area: Area = {
  id: 'suppressions',
  label: 'Suppressions',
  href: '/suppressions',
  group: 'project',
  routes: [{ path: '/suppressions', component: SuppressionList }],
};
