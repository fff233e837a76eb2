// The Analytics area: its routes, registered once in pages/registry.ts. A
// placeholder until the area's pages land (docs/console-ui.md "Adding a page").
import type { Area } from '../../routes';
import { EmptyState, Page } from '../../ui';

function AnalyticsPlaceholder() {
  return (
    <Page title="Analytics" description="Outcomes by day and usage against the plan's limits.">
      <EmptyState title="Coming soon">
        <p>This part of the console is being built. Until then the API does it: see the API reference.</p>
      </EmptyState>
    </Page>
  );
}

export const area: Area = {
  id: 'analytics',
  label: 'Analytics',
  href: '/analytics',
  group: 'project',
  routes: [{ path: '/analytics', component: AnalyticsPlaceholder }],
};
