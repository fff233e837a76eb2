// The Admin area: its routes, registered once in pages/registry.ts. A
// placeholder until the area's pages land (docs/console-ui.md "Adding a page").
import type { Area } from '../../routes';
import { EmptyState, Page } from '../../ui';

function AdminPlaceholder() {
  return (
    <Page title="Admin" description="The platform: users, plans, projects, identity providers, relay nodes.">
      <EmptyState title="Coming soon">
        <p>This part of the console is being built. Until then the API does it: see the API reference.</p>
      </EmptyState>
    </Page>
  );
}

export const area: Area = {
  id: 'admin',
  label: 'Admin',
  href: '/admin',
  group: 'platform',
  routes: [{ path: '/admin', component: AdminPlaceholder }],
};
