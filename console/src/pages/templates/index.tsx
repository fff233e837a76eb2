// The Templates area (docs/templates.md): the list, a template's versions with
// activation, roll-back and test send, the localization editor with its live
// preview, and the stylesheets. Stylesheet paths come before `/templates/:id`
// (the router takes the first match).
import type { Area } from '../../routes';
import { lazyPage } from '../../routes';
import TemplateList from './list';

export const area: Area = {
  id: 'templates',
  label: 'Templates',
  href: '/templates',
  group: 'project',
  routes: [
    { path: '/templates', component: TemplateList },
    { path: '/templates/stylesheets', component: lazyPage(() => import('./stylesheets')) },
    { path: '/templates/stylesheets/:id', component: lazyPage(() => import('./stylesheet')) },
    { path: '/templates/:id', component: lazyPage(() => import('./detail')) },
    { path: '/templates/:id/versions/:versionId', component: lazyPage(() => import('./editor')) },
  ],
};
