// The Audit area: its routes, registered once in pages/registry.ts. A
// placeholder until the area's pages land (docs/console-ui.md "Adding a page").
import type { Area } from '../../routes';
import { EmptyState, Page } from '../../ui';

function AuditPlaceholder() {
  return (
    <Page title="Audit" description="What happened in this project, and who did it.">
      <EmptyState title="Coming soon">
        <p>This part of the console is being built. Until then the API does it: see the API reference.</p>
      </EmptyState>
    </Page>
  );
}

export const area: Area = {
  id: 'audit',
  label: 'Audit',
  href: '/audit',
  group: 'project',
  routes: [{ path: '/audit', component: AuditPlaceholder }],
};
