import type { ComponentChildren } from 'preact';

/** Nothing here yet: what it is and what to do next (a button, a sentence). */
export function EmptyState({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty-state">
      <h2>{title}</h2>
      {children}
    </div>
  );
}
