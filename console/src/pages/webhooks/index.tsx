// The Webhooks area: its routes, registered once in pages/registry.ts. A
// placeholder until the area's pages land (docs/console-ui.md "Adding a page").
import type { Area } from '../../routes';
import { EmptyState, Page } from '../../ui';

function WebhooksPlaceholder() {
  return (
    <Page title="Webhooks" description="Endpoints that receive this project's events, and their deliveries.">
      <EmptyState title="Coming soon">
        <p>This part of the console is being built. Until then the API does it: see the API reference.</p>
      </EmptyState>
    </Page>
  );
}

export const area: Area = {
  id: 'webhooks',
  label: 'Webhooks',
  href: '/webhooks',
  group: 'project',
  routes: [{ path: '/webhooks', component: WebhooksPlaceholder }],
};
