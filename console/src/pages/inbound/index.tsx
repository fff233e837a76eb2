// The Inbound area: its routes, registered once in pages/registry.ts. A
// placeholder until the area's pages land (docs/console-ui.md "Adding a page").
import type { Area } from '../../routes';
import { EmptyState, Page } from '../../ui';

function InboundPlaceholder() {
  return (
    <Page title="Inbound" description="Mail received for your domains, with its SPF, DKIM and DMARC verdicts.">
      <EmptyState title="Coming soon">
        <p>This part of the console is being built. Until then the API does it: see the API reference.</p>
      </EmptyState>
    </Page>
  );
}

export const area: Area = {
  id: 'inbound',
  label: 'Inbound',
  href: '/inbound',
  group: 'project',
  routes: [{ path: '/inbound', component: InboundPlaceholder }],
};
