// The Emails area: its routes, registered once in pages/registry.ts. A
// placeholder until the area's pages land (docs/console-ui.md "Adding a page").
import type { Area } from '../../routes';
import { EmptyState, Page } from '../../ui';

function EmailsPlaceholder() {
  return (
    <Page title="Emails" description="Every message sent from this project, live as it moves.">
      <EmptyState title="Coming soon">
        <p>This part of the console is being built. Until then the API does it: see the API reference.</p>
      </EmptyState>
    </Page>
  );
}

export const area: Area = {
  id: 'emails',
  label: 'Emails',
  href: '/emails',
  group: 'project',
  routes: [{ path: '/emails', component: EmailsPlaceholder }],
};
