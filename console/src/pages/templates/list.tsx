// Templates, newest first, a page at a time (keyset: `next.before`/`before_id`),
// and the form that creates one (then opens it to write its first version).
import { useCallback, useEffect, useState } from 'preact/hooks';
import { Link, useLocation } from 'wouter-preact';
import { api, type ApiSchemas } from '../../api/client';
import { messageOf, ok } from '../../api/errors';
import { useSubmit } from '../../api/use-submit';
import { Button, Dialog, Field, FormError, Page, Table } from '../../ui';
import { when } from './format';
import './templates.css';

type Template = ApiSchemas['Template'];
type Cursor = { before: string; before_id: string } | null;
const PAGE = 50;

export default function TemplateList() {
  const [rows, setRows] = useState<Template[] | undefined>();
  const [next, setNext] = useState<Cursor>(null);
  const [error, setError] = useState<string>();
  const [creating, setCreating] = useState(false);
  const load = useCallback(async (cursor: Cursor) => {
    setError(undefined);
    try {
      const data = await ok(api.GET('/api/v1/templates', { params: { query: { limit: PAGE, ...(cursor ?? {}) } } }));
      setRows((r) => (cursor ? [...(r ?? []), ...data.templates] : data.templates));
      setNext(data.next as Cursor);
    } catch (e) {
      setError(messageOf(e));
      setRows((r) => r ?? []);
    }
  }, []);
  useEffect(() => { void load(null); }, [load]);
  return (
    <Page
      title="Templates"
      description="Named emails kept as versions, written per language; sends by template use the active version."
      actions={<>
        <Link href="/templates/stylesheets" class="btn btn-secondary tp-btn-link">Stylesheets</Link>
        <Button variant="primary" onClick={() => setCreating(true)}>New template</Button>
      </>}
    >
      <FormError message={error} />
      <Table
        caption="Templates"
        rows={rows}
        rowKey={(t) => t.id}
        columns={[
          { label: 'Name', cell: (t) => <Link href={`/templates/${t.id}`}>{t.name}</Link> },
          { label: 'Description', cell: (t) => t.description ?? '' },
          { label: 'Status', cell: (t) => (t.active_version_id ? <span class="tp-badge tp-badge-ok">Active</span> : <span class="tp-badge">Draft only</span>) },
          { label: 'Versions', class: 'num', cell: (t) => t.highest_version },
          { label: 'Default language', cell: (t) => <code>{t.default_language}</code> },
          { label: 'Updated', cell: (t) => when(t.updated_at) },
        ]}
        empty={{
          title: 'No templates yet',
          children: <p>Create a template, write its subject and body per language, preview it with sample data, and activate it. <Button variant="primary" onClick={() => setCreating(true)}>New template</Button></p>,
        }}
        footer={next && <Button onClick={() => void load(next)}>Load more</Button>}
      />
      <CreateTemplate open={creating} onClose={() => setCreating(false)} />
    </Page>
  );
}

function CreateTemplate({ open, onClose }: { open: boolean; onClose: () => void }) {
  const [, navigate] = useLocation();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [language, setLanguage] = useState('en');
  const submit = useSubmit(async () => {
    const { template } = await ok(api.POST('/api/v1/templates', {
      body: { name, default_language: language, ...(description.trim() ? { description } : {}) },
    }));
    // A template is written in versions: make its first draft and open it in the editor.
    const { version } = await ok(api.POST('/api/v1/templates/{templateId}/versions', {
      params: { path: { templateId: template.id } }, body: {},
    }));
    navigate(`/templates/${template.id}/versions/${version.id}`);
  }, ['name', 'description', 'default_language']);
  return (
    <Dialog
      open={open}
      title="New template"
      onClose={onClose}
      actions={<>
        <Button onClick={onClose}>Cancel</Button>
        <Button variant="primary" type="submit" form="new-template" busy={submit.busy}>Create template</Button>
      </>}
    >
      <form id="new-template" class="stack" onSubmit={(e) => { e.preventDefault(); void submit.run(); }}>
        <Field label="Name" name="name" value={name} required maxLength={200} error={submit.fields.name}
          hint="Unique in the project, e.g. Password reset" onInput={(e) => setName(e.currentTarget.value)} />
        <Field label="Description" name="description" value={description} error={submit.fields.description}
          onInput={(e) => setDescription(e.currentTarget.value)} />
        <Field label="Default language" name="default_language" value={language} error={submit.fields.default_language}
          hint="A BCP 47 tag (en, pt-BR): used when a send asks for a language the version lacks" onInput={(e) => setLanguage(e.currentTarget.value)} />
        <FormError message={submit.error} />
      </form>
    </Dialog>
  );
}
