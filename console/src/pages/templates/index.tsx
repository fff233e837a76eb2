// The Templates area: its routes, registered once in pages/registry.ts. A
// placeholder until the area's pages land (docs/console-ui.md "Adding a page").
import type { Area } from '../../routes';
import { EmptyState, Page } from '../../ui';

function TemplatesPlaceholder() {
  return (
    <Page title="Templates" description="Templates, their versions and localizations, and stylesheets.">
      <EmptyState title="Coming soon">
        <p>This part of the console is being built. Until then the API does it: see the API reference.</p>
      </EmptyState>
    </Page>
  );
}

export const area: Area = {
  id: 'templates',
  label: 'Templates',
  href: '/templates',
  group: 'project',
  routes: [{ path: '/templates', component: TemplatesPlaceholder }],
};
