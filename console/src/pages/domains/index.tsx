// The Domains area: its routes, registered once in pages/registry.ts. A
// placeholder until the area's pages land (docs/console-ui.md "Adding a page").
import type { Area } from '../../routes';
import { EmptyState, Page } from '../../ui';

function DomainsPlaceholder() {
  return (
    <Page title="Domains" description="Sending domains, the DNS records to publish, and their verification.">
      <EmptyState title="Coming soon">
        <p>This part of the console is being built. Until then the API does it: see the API reference.</p>
      </EmptyState>
    </Page>
  );
}

export const area: Area = {
  id: 'domains',
  label: 'Domains',
  href: '/domains',
  group: 'project',
  routes: [{ path: '/domains', component: DomainsPlaceholder }],
};
