// The Bounces area: its routes, registered once in pages/registry.ts. A
// placeholder until the area's pages land (docs/console-ui.md "Adding a page").
import type { Area } from '../../routes';
import { EmptyState, Page } from '../../ui';

function BouncesPlaceholder() {
  return (
    <Page title="Bounces" description="Bounced messages and their codes.">
      <EmptyState title="Coming soon">
        <p>This part of the console is being built. Until then the API does it: see the API reference.</p>
      </EmptyState>
    </Page>
  );
}

export const area: Area = {
  id: 'bounces',
  label: 'Bounces',
  href: '/bounces',
  group: 'project',
  routes: [{ path: '/bounces', component: BouncesPlaceholder }],
};
