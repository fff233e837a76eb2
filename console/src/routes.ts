// What an area module (console/src/pages/<area>/index.tsx) exports: its place
// in the left nav and its routes. pages/registry.ts lists every area once.
import type { ComponentType } from 'preact';
import { lazy } from 'preact/compat';
import type { SessionState, WhoAmI } from './session';

/** Path parameters of a route (`/keys/:id` → `{ id }`), given to the page as `params`. */
export interface PageProps<Params extends Record<string, string> = Record<string, string>> {
  params: Params;
}

export interface AreaRoute {
  /** A wouter pattern, absolute: `/keys`, `/keys/:id`. Each path belongs to one area. */
  path: string;
  component: ComponentType<PageProps<any>>;
}

export interface Area {
  /** The folder name under pages/: `keys`, `domains`, … */
  id: string;
  /** The nav label. */
  label: string;
  /** Where the nav link goes (usually the area's list). */
  href: string;
  /** Which nav group it sits in. */
  group: 'project' | 'you' | 'platform';
  routes: AreaRoute[];
  /** Whether the nav shows it (and its routes answer) for this session; shown to everyone when absent. */
  visible?: (session: SessionState & { me: WhoAmI }) => boolean;
}

/**
 * A page loaded when first opened, so the first load carries only the shell:
 * `component: lazyPage(() => import('./detail'))` (the module's default export).
 */
export function lazyPage<P>(load: () => Promise<{ default: ComponentType<P> }>): ComponentType<P> {
  return lazy(load) as ComponentType<P>;
}
