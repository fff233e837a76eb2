// The rendered preview: subject, the HTML in a sandboxed frame (no scripts, no
// same-origin: `sandbox=""`; the page's CSP, which the frame inherits, keeps
// remote images and other origins out too), and the text part.
//
// The inherited CSP also allows no inline style, so the frame shows the HTML's
// structure and text but not its <style> or style="" rules; the page says so.
// Showing them needs the frame's document served with a policy of its own
// (as the email log's preview is): a Worker route rendering the preview.
import { useState } from 'preact/hooks';
import type { ApiSchemas } from '../../api/client';

export type PreviewState =
  | { state: 'idle' }
  | { state: 'loading' }
  | { state: 'ready'; busy: boolean; result: ApiSchemas['TemplatePreview'] }
  | { state: 'error'; message: string };

export function PreviewPane({ state }: { state: PreviewState }) {
  const [view, setView] = useState<'html' | 'text'>('html');
  return (
    <section class="tp-preview" aria-labelledby="preview-title" aria-busy={state.state === 'loading' || (state.state === 'ready' && state.busy)}>
      <div class="tp-preview-head">
        <h2 id="preview-title">Preview</h2>
        <div class="tp-segmented" role="group" aria-label="Part shown">
          <button type="button" class="btn btn-ghost" aria-pressed={view === 'html'} onClick={() => setView('html')}>HTML</button>
          <button type="button" class="btn btn-ghost" aria-pressed={view === 'text'} onClick={() => setView('text')}>Text</button>
        </div>
      </div>
      {state.state === 'idle' && <p class="tp-muted">The preview appears here once the version has a language with a subject and a body.</p>}
      {state.state === 'loading' && <p class="tp-muted" role="status">Rendering…</p>}
      {state.state === 'error' && <p class="tp-preview-error" role="alert">{state.message}</p>}
      {state.state === 'ready' && (
        <div class="tp-preview-body">
          <dl class="tp-preview-meta">
            <dt>Subject</dt><dd data-testid="preview-subject">{state.result.subject}</dd>
            <dt>Language</dt><dd>{state.result.language} · version {state.result.version}</dd>
          </dl>
          {view === 'html'
            ? (state.result.html === null
              ? <p class="tp-muted">This localization has no HTML body.</p>
              : <>
                <iframe class="tp-preview-frame" title="Rendered HTML body" sandbox="" referrerpolicy="no-referrer" srcdoc={state.result.html} />
                <p class="tp-muted tp-small">Shown without its styles (the console allows no inline style); send a test to see it styled.</p>
              </>)
            : (state.result.text === null
              ? <p class="tp-muted">This localization has no text body.</p>
              : <pre class="tp-preview-text" data-testid="preview-text">{state.result.text}</pre>)}
        </div>
      )}
    </section>
  );
}
