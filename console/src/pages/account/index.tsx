// The Account area: you (profile, two-factor, passkeys, sessions, linked
// providers) and the current project's members and invitations.
import type { Area } from '../../routes';
import { lazyPage } from '../../routes';

export const area: Area = {
  id: 'account',
  label: 'Account',
  href: '/account',
  group: 'you',
  routes: [
    { path: '/account', component: lazyPage(() => import('./security')) },
    { path: '/account/members', component: lazyPage(() => import('./members')) },
  ],
};
