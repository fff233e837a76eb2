// The Suppressions area: its routes, registered once in pages/registry.ts. A
// placeholder until the area's pages land (docs/console-ui.md "Adding a page").
import type { Area } from '../../routes';
import { EmptyState, Page } from '../../ui';

function SuppressionsPlaceholder() {
  return (
    <Page title="Suppressions" description="Addresses this project does not send to.">
      <EmptyState title="Coming soon">
        <p>This part of the console is being built. Until then the API does it: see the API reference.</p>
      </EmptyState>
    </Page>
  );
}

export const area: Area = {
  id: 'suppressions',
  label: 'Suppressions',
  href: '/suppressions',
  group: 'project',
  routes: [{ path: '/suppressions', component: SuppressionsPlaceholder }],
};
