// The frame of the pages a person sees before signing in.
import type { ComponentChildren } from 'preact';
import { useEffect } from 'preact/hooks';

export function AuthFrame({ title, children }: { title: string; children: ComponentChildren }) {
  useEffect(() => {
    document.title = `${title} · edgemail`;
  }, [title]);
  return (
    <main class="auth" id="main">
      <div class="auth-card">
        <p class="brand auth-brand">edgemail</p>
        <h1>{title}</h1>
        {children}
      </div>
    </main>
  );
}
