// The rendered preview: subject, the HTML in a sandboxed frame, and the text part.
//
// The frame's document is the Worker's (GET …/versions/{id}/preview/html), not
// a `srcdoc`: a srcdoc document inherits the console's policy, which allows no
// inline style, so the message's <style> and style="" would not apply. The
// route's answer carries a policy of its own (the email preview's: inline
// styles, no script, no request to any host, framed by this origin only), and
// the frame's sandbox (empty: no scripts, no same-origin, no popups) holds the same.
import { useState } from 'preact/hooks';
import type { ApiSchemas } from '../../api/client';

export type PreviewState =
  | { state: 'idle' }
  | { state: 'loading' }
  /** `frame`: the HTML page's URL (null: too much data for a URL; the frame is left out); `rev` changes with every render. */
  | { state: 'ready'; busy: boolean; result: ApiSchemas['TemplatePreview']; frame: string | null; rev: number }
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
              : state.frame === null
                ? <p class="tp-muted">The sample data is too long to show the HTML here (8000 characters at most); send a test to see it.</p>
                : <>
                  <iframe key={state.rev} class="tp-preview-frame" title="Rendered HTML body" sandbox=""
                    referrerpolicy="no-referrer" src={state.frame} data-testid="preview-frame" />
                  <p class="tp-muted tp-small">Remote images are not loaded here; send a test to see them.</p>
                </>)
            : (state.result.text === null
              ? <p class="tp-muted">This localization has no text body.</p>
              : <pre class="tp-preview-text" data-testid="preview-text">{state.result.text}</pre>)}
        </div>
      )}
    </section>
  );
}
