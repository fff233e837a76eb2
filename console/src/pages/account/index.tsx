// The Account area: its routes, registered once in pages/registry.ts. A
// placeholder until the area's pages land (docs/console-ui.md "Adding a page").
import type { Area } from '../../routes';
import { EmptyState, Page } from '../../ui';

function AccountPlaceholder() {
  return (
    <Page title="Account" description="Your profile, sign-in methods, sessions and the project's members.">
      <EmptyState title="Coming soon">
        <p>This part of the console is being built. Until then the API does it: see the API reference.</p>
      </EmptyState>
    </Page>
  );
}

export const area: Area = {
  id: 'account',
  label: 'Account',
  href: '/account',
  group: 'you',
  routes: [{ path: '/account', component: AccountPlaceholder }],
};
