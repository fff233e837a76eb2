// The Keys area: its routes, registered once in pages/registry.ts. A
// placeholder until the area's pages land (docs/console-ui.md "Adding a page").
import type { Area } from '../../routes';
import { EmptyState, Page } from '../../ui';

function KeysPlaceholder() {
  return (
    <Page title="Keys" description="API keys with the permissions you pick; the token is shown once.">
      <EmptyState title="Coming soon">
        <p>This part of the console is being built. Until then the API does it: see the API reference.</p>
      </EmptyState>
    </Page>
  );
}

export const area: Area = {
  id: 'keys',
  label: 'Keys',
  href: '/keys',
  group: 'project',
  routes: [{ path: '/keys', component: KeysPlaceholder }],
};
