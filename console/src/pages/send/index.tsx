// The Send area: its routes, registered once in pages/registry.ts. A
// placeholder until the area's pages land (docs/console-ui.md "Adding a page").
import type { Area } from '../../routes';
import { EmptyState, Page } from '../../ui';

function SendPlaceholder() {
  return (
    <Page title="Send" description="Send a test message, plain or from a template.">
      <EmptyState title="Coming soon">
        <p>This part of the console is being built. Until then the API does it: see the API reference.</p>
      </EmptyState>
    </Page>
  );
}

export const area: Area = {
  id: 'send',
  label: 'Send',
  href: '/send',
  group: 'project',
  routes: [{ path: '/send', component: SendPlaceholder }],
};
