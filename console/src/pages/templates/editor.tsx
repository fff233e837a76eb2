// The localization editor of one version: per language a subject, an HTML and
// a text body (docs/templates.md "Localizations"), the version's stylesheet and
// sample data, and a live preview beside them.
//
// The preview is the API's own render (POST …/versions/{id}/preview), never one
// of ours: a draft is saved as you type (a moment after the last keystroke; a
// draft is not what sends use until it is activated) and then rendered, so what
// you see is what the service will send. An activated version is frozen: it is
// shown read-only, and its preview still follows the language and sample data.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { Link, useLocation } from 'wouter-preact';
import { api, type ApiSchemas } from '../../api/client';
import { ApiError, messageOf, ok } from '../../api/errors';
import type { PageProps } from '../../routes';
import { Button, EmptyState, Field, FormError, Page, useToast } from '../../ui';
import { VersionStatus } from './detail';
import { when } from './format';
import './templates.css';
import { PreviewPane, type PreviewState } from './preview';

type Template = ApiSchemas['TemplateWithVersions'];
type Version = ApiSchemas['TemplateVersion'];
type Localization = ApiSchemas['TemplateLocalizationRecord'];
type Stylesheet = ApiSchemas['Stylesheet'];

/** What the form edits: empty strings for bodies not given. */
interface Draft { language: string; subject: string; html: string; text: string }
type SaveState = { state: 'saved' | 'saving' | 'unsaved' } | { state: 'error'; message: string; fields: Record<string, string> };

const SAVE_DELAY_MS = 500;

export default function VersionEditor({ params }: PageProps<{ id: string; versionId: string }>) {
  const [template, setTemplate] = useState<Template | null>();
  const [loadError, setLoadError] = useState<string>();
  const [drafts, setDrafts] = useState<Draft[]>([]);
  const [current, setCurrent] = useState(0);
  const [sample, setSample] = useState('');
  const [stylesheetId, setStylesheetId] = useState('');
  const [stylesheets, setStylesheets] = useState<Stylesheet[]>([]);
  const [save, setSave] = useState<SaveState>({ state: 'saved' });
  const [preview, setPreview] = useState<PreviewState>({ state: 'idle' });
  const version = template?.versions.find((v) => v.id === params.versionId);
  const frozen = Boolean(version?.first_activated_at);
  const path = { templateId: params.id, versionId: params.versionId };

  useEffect(() => {
    let gone = false;
    void (async () => {
      try {
        const [{ template: t }, { localizations }, { stylesheets: s }] = await Promise.all([
          ok(api.GET('/api/v1/templates/{templateId}', { params: { path: { templateId: params.id } } })),
          ok(api.GET('/api/v1/templates/{templateId}/versions/{versionId}/localizations', { params: { path } })),
          ok(api.GET('/api/v1/stylesheets')),
        ]);
        if (gone) return;
        const v = t.versions.find((x) => x.id === params.versionId);
        if (!v) throw new Error('this version is not one of the template\'s');
        setTemplate(t);
        setStylesheets(s);
        setDrafts(localizations.map(toDraft));
        const def = localizations.findIndex((l) => l.language === t.default_language);
        setCurrent(def >= 0 ? def : 0);
        setSample(v.sample_data ?? '');
        setStylesheetId(v.stylesheet_id ?? '');
        setSave({ state: 'saved' });
        setPreview({ state: 'idle' });
        trigger.current++;
        setTick((n) => n + 1);
      } catch (e) {
        if (!gone) { setLoadError(messageOf(e)); setTemplate(null); }
      }
    })();
    return () => { gone = true; };
  }, [params.id, params.versionId]);

  // Every edit bumps `tick`; a moment after the last one the draft is saved and rendered.
  const [tick, setTick] = useState(0);
  const trigger = useRef(0);
  const dirty = useRef({ localizations: false, version: false });
  const edit = (what: 'localizations' | 'version' | 'preview') => {
    if (what !== 'preview') dirty.current[what] = true;
    if (what !== 'preview' && !frozen) setSave({ state: 'unsaved' });
    setTick((n) => n + 1);
  };
  const sampleProblem = parseProblem(sample);
  const seq = useRef(0);
  const run = useCallback(async () => {
    if (!version) return;
    const mine = ++seq.current;
    if (!frozen && (dirty.current.localizations || dirty.current.version)) {
      setSave({ state: 'saving' });
      try {
        if (dirty.current.version) {
          dirty.current.version = false;
          await ok(api.PATCH('/api/v1/templates/{templateId}/versions/{versionId}', {
            params: { path },
            body: { stylesheet_id: stylesheetId || null, ...(sampleProblem ? {} : { sample_data: sample.trim() ? sample : null }) },
          }));
        }
        if (dirty.current.localizations && drafts.length) {
          dirty.current.localizations = false;
          await ok(api.PUT('/api/v1/templates/{templateId}/versions/{versionId}/localizations', {
            params: { path },
            body: { localizations: drafts.map(fromDraft) },
          }));
        }
        if (mine === seq.current) setSave({ state: 'saved' });
      } catch (e) {
        // Keep it dirty so the next edit tries again; say what the API named.
        dirty.current.localizations = true;
        setSave({ state: 'error', message: messageOf(e), fields: e instanceof ApiError ? e.fields : {} });
        return;
      }
    }
    if (!drafts.length) { setPreview({ state: 'idle' }); return; }
    if (sampleProblem) { setPreview({ state: 'error', message: `Sample data: ${sampleProblem}` }); return; }
    setPreview((p) => (p.state === 'ready' ? { ...p, busy: true } : { state: 'loading' }));
    try {
      const data = sample.trim() ? (JSON.parse(sample) as Record<string, unknown>) : {};
      const rendered = await ok(api.POST('/api/v1/templates/{templateId}/versions/{versionId}/preview', {
        params: { path },
        body: { language: drafts[current]?.language, data },
      }));
      if (mine === seq.current) setPreview({ state: 'ready', busy: false, result: rendered, frame: frameOf(path, rendered.language, data, frozen), rev: mine });
    } catch (e) {
      if (mine === seq.current) setPreview({ state: 'error', message: messageOf(e) });
    }
  }, [version, frozen, drafts, current, sample, sampleProblem, stylesheetId]);
  useEffect(() => {
    if (!version || tick === 0) return undefined;
    const timer = setTimeout(() => void run(), SAVE_DELAY_MS);
    return () => clearTimeout(timer);
  }, [tick]);

  if (template === undefined) return <p class="loading" role="status">Loading…</p>;
  if (template === null || !version) {
    return (
      <Page title="Template version">
        <EmptyState title="This version could not be read"><p>{loadError} <Link href={`/templates/${params.id}`}>Back to the template</Link></p></EmptyState>
      </Page>
    );
  }
  const draft = drafts[current];
  const fieldErr = (part: string) => (save.state === 'error' ? save.fields[`localizations.${current}.${part}`] : undefined);
  const setPart = (part: keyof Draft, value: string) => {
    setDrafts((ds) => ds.map((d, i) => (i === current ? { ...d, [part]: value } : d)));
    edit('localizations');
  };
  return (
    <Page
      title={`${template.name} · version ${version.version}`}
      description={<><VersionStatus version={version} /> · created {when(version.created_at)} · <Link href={`/templates/${template.id}`}>All versions</Link></>}
      actions={<SaveIndicator frozen={frozen} save={save} />}
    >
      {frozen && <FrozenNotice template={template} version={version} />}
      <div class="tp-editor">
        <div class="tp-editor-form stack">
          <LanguageTabs drafts={drafts} current={current} frozen={frozen} defaultLanguage={template.default_language}
            onPick={(i) => { setCurrent(i); edit('preview'); }}
            onAdd={(language) => {
              const base = draft ?? { language, subject: '', html: '', text: '' };
              setDrafts((ds) => [...ds, { ...base, language }]);
              setCurrent(drafts.length);
              edit('localizations');
            }}
            onRemove={() => {
              setDrafts((ds) => ds.filter((_, i) => i !== current));
              setCurrent(0);
              edit('localizations');
            }} />
          {draft
            ? (
              <div class="stack" role="tabpanel" aria-label={`Localization ${draft.language}`}>
                <Field label="Subject" name={`localizations.${current}.subject`} value={draft.subject} readOnly={frozen}
                  error={fieldErr('subject')} hint="Mustache: {{name}} reads the data; a missing variable is refused, not left empty"
                  onInput={(e) => setPart('subject', e.currentTarget.value)} />
                <Field label="HTML body" name={`localizations.${current}.html`} error={fieldErr('html')}>
                  {(control) => <textarea {...control} class="tp-code" rows={12} readOnly={frozen} spellcheck={false} value={draft.html} onInput={(e) => setPart('html', e.currentTarget.value)} />}
                </Field>
                <Field label="Text body" name={`localizations.${current}.text`} error={fieldErr('text')} hint="The plain-text part; give HTML, text or both">
                  {(control) => <textarea {...control} class="tp-code" rows={6} readOnly={frozen} spellcheck={false} value={draft.text} onInput={(e) => setPart('text', e.currentTarget.value)} />}
                </Field>
              </div>
            )
            : <EmptyState title="No languages yet"><p>Add a language above (for example <code>{template.default_language}</code>, the default) and write its subject and body.</p></EmptyState>}
          <Field label="Stylesheet" name="stylesheet_id" error={save.state === 'error' ? save.fields.stylesheet_id : undefined}
            hint={<>Its CSS goes into the HTML's head in every language. <Link href="/templates/stylesheets">Manage stylesheets</Link></>}>
            {(control) => (
              <select {...control} value={stylesheetId} disabled={frozen} onChange={(e) => { setStylesheetId(e.currentTarget.value); edit('version'); }}>
                <option value="">None</option>
                {stylesheets.map((s) => <option value={s.id}>{s.name}</option>)}
              </select>
            )}
          </Field>
          <Field label="Sample data" name="sample_data" error={sampleProblem ?? (save.state === 'error' ? save.fields.sample_data : undefined)}
            hint={frozen ? 'A JSON object for this preview only: a frozen version keeps its sample data' : 'A JSON object the preview renders with, saved with the draft'}>
            {(control) => <textarea {...control} class="tp-code" rows={6} spellcheck={false} value={sample} onInput={(e) => { setSample(e.currentTarget.value); edit(frozen ? 'preview' : 'version'); }} />}
          </Field>
          <FormError message={save.state === 'error' && !Object.keys(save.fields).some((f) => f.startsWith(`localizations.${current}.`) || f === 'stylesheet_id' || f === 'sample_data') ? save.message : undefined} />
        </div>
        <PreviewPane state={preview} />
      </div>
    </Page>
  );
}

function toDraft(l: Localization): Draft {
  return { language: l.language, subject: l.subject, html: l.html ?? '', text: l.text ?? '' };
}

function fromDraft(d: Draft) {
  return { language: d.language, subject: d.subject, ...(d.html ? { html: d.html } : {}), ...(d.text ? { text: d.text } : {}) };
}

/** Characters of `data` the HTML page's URL may carry (GET …/preview/html). */
const MAX_FRAME_DATA = 8000;

/**
 * The URL of the rendered HTML as a page of its own, for the preview's frame:
 * the language the render landed on, and the data. A draft's sample data is
 * saved before the render, so when it is too long for a URL the page reads
 * the saved one; a frozen version's is the editor's alone (null: no frame).
 */
function frameOf(path: { templateId: string; versionId: string }, language: string, data: Record<string, unknown>, frozen: boolean): string | null {
  const query = new URLSearchParams({ language });
  const encoded = JSON.stringify(data);
  if (encoded.length <= MAX_FRAME_DATA) query.set('data', encoded);
  else if (frozen) return null;
  return `/api/v1/templates/${encodeURIComponent(path.templateId)}/versions/${encodeURIComponent(path.versionId)}/preview/html?${query.toString()}`;
}

/** Why the sample data cannot be used (not JSON, not an object), or undefined when it can. */
function parseProblem(sample: string): string | undefined {
  if (!sample.trim()) return undefined;
  try {
    const v: unknown = JSON.parse(sample);
    return v && typeof v === 'object' && !Array.isArray(v) ? undefined : 'must be a JSON object ({"name": "Ada"})';
  } catch (e) {
    return `not valid JSON (${e instanceof Error ? e.message : String(e)})`;
  }
}

function SaveIndicator({ frozen, save }: { frozen: boolean; save: SaveState }) {
  if (frozen) return <span class="tp-save-state">Read-only</span>;
  const text = { saved: 'Draft saved', saving: 'Saving…', unsaved: 'Unsaved changes', error: 'Not saved' }[save.state];
  return <span class={`tp-save-state tp-save-${save.state}`} role="status">{text}</span>;
}

function FrozenNotice({ template, version }: { template: Template; version: Version }) {
  const [, navigate] = useLocation();
  const toast = useToast();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const copy = async () => {
    setBusy(true);
    try {
      const { version: v } = await ok(api.POST('/api/v1/templates/{templateId}/versions', {
        params: { path: { templateId: template.id } },
        body: { stylesheet_id: version.stylesheet_id ?? undefined, sample_data: version.sample_data ?? undefined },
      }));
      const { localizations } = await ok(api.GET('/api/v1/templates/{templateId}/versions/{versionId}/localizations', { params: { path: { templateId: template.id, versionId: version.id } } }));
      if (localizations.length) {
        await ok(api.PUT('/api/v1/templates/{templateId}/versions/{versionId}/localizations', {
          params: { path: { templateId: template.id, versionId: v.id } },
          body: { localizations: localizations.map((l) => fromDraft(toDraft(l))) },
        }));
      }
      toast(`Version ${v.version} made from version ${version.version}`);
      navigate(`/templates/${template.id}/versions/${v.id}`);
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="tp-notice tp-notice-info">
      <p>Version {version.version} was activated on {when(version.first_activated_at)} and cannot change, so rolling back to it renders exactly what was live. To change it, edit a copy.</p>
      <Button variant="primary" busy={busy} onClick={() => void copy()}>Edit a copy as a new version</Button>
      <FormError message={error} />
    </div>
  );
}

function LanguageTabs({ drafts, current, frozen, defaultLanguage, onPick, onAdd, onRemove }: {
  drafts: Draft[]; current: number; frozen: boolean; defaultLanguage: string;
  onPick: (i: number) => void; onAdd: (language: string) => void; onRemove: () => void;
}) {
  const [adding, setAdding] = useState('');
  const [problem, setProblem] = useState<string>();
  const add = () => {
    let tag: string;
    try {
      tag = Intl.getCanonicalLocales(adding.trim())[0] ?? '';
    } catch {
      setProblem('must be a BCP 47 language tag (en, pt-BR)');
      return;
    }
    if (!tag) { setProblem('write a language tag (en, pt-BR)'); return; }
    if (drafts.some((d) => d.language.toLowerCase() === tag.toLowerCase())) { setProblem(`${tag} is already here`); return; }
    setProblem(undefined);
    setAdding('');
    onAdd(tag);
  };
  return (
    <div class="tp-language-bar">
      <div role="tablist" aria-label="Languages" class="tp-tabs">
        {drafts.map((d, i) => (
          <button type="button" role="tab" class="tp-tab" aria-selected={i === current} tabIndex={i === current ? 0 : -1} key={d.language}
            onClick={() => onPick(i)}
            onKeyDown={(e) => {
              if (e.key === 'ArrowRight' || e.key === 'ArrowLeft') {
                const n = (current + (e.key === 'ArrowRight' ? 1 : drafts.length - 1)) % drafts.length;
                onPick(n);
                ((e.currentTarget.parentElement?.children[n]) as HTMLElement | undefined)?.focus();
              }
            }}>
            {d.language}{d.language === defaultLanguage ? ' (default)' : ''}
          </button>
        ))}
      </div>
      {!frozen && (
        <div class="tp-language-add">
          <Field label="Add a language" name="new_language" value={adding} placeholder={drafts.length ? 'pt-BR' : defaultLanguage} error={problem}
            onInput={(e) => setAdding(e.currentTarget.value)}
            onKeyDown={(e) => { if (e.key === 'Enter') { e.preventDefault(); add(); } }} />
          <Button onClick={add}>Add language</Button>
          {drafts.length > 1 && <Button variant="ghost" onClick={onRemove}>Remove {drafts[current]?.language}</Button>}
        </div>
      )}
    </div>
  );
}
