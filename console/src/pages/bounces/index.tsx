// The Bounces area (docs/bounces.md): bounce and complaint records with their
// codes, newest first, each one click from its email.
import type { Area } from '../../routes';
import BounceList from './list';

export const area: Area = {
  id: 'bounces',
  label: 'Bounces',
  href: '/bounces',
  group: 'project',
  routes: [{ path: '/bounces', component: BounceList }],
};
