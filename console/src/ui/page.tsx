// Every page's frame: its title (also the document's), the actions at the
// top right, and the content.
import type { ComponentChildren } from 'preact';
import { useEffect } from 'preact/hooks';

export interface PageProps {
  title: string;
  /** One line under the title: what this page is for. */
  description?: ComponentChildren;
  actions?: ComponentChildren;
  children?: ComponentChildren;
}

export function Page({ title, description, actions, children }: PageProps) {
  useEffect(() => {
    document.title = `${title} · edgemail`;
  }, [title]);
  return (
    <section class="page" aria-labelledby="page-title">
      <header class="page-header">
        <div>
          <h1 id="page-title">{title}</h1>
          {description && <p class="page-description">{description}</p>}
        </div>
        {actions && <div class="page-actions">{actions}</div>}
      </header>
      {children}
    </section>
  );
}
