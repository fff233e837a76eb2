// The project's stylesheets (all at once: the API lists them unpaged), and the
// form that creates one. A version names one; its CSS goes into the HTML head.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { Link, useLocation } from 'wouter-preact';
import { api, type ApiSchemas } from '../../api/client';
import { messageOf, ok } from '../../api/errors';
import { useSubmit } from '../../api/use-submit';
import { Button, Dialog, Field, FormError, Page, Table } from '../../ui';
import { when } from './format';
import './templates.css';

export default function Stylesheets() {
  const [rows, setRows] = useState<ApiSchemas['Stylesheet'][] | undefined>();
  const [error, setError] = useState<string>();
  const [creating, setCreating] = useState(false);
  const load = useCallback(async () => {
    try {
      setRows((await ok(api.GET('/api/v1/stylesheets'))).stylesheets);
    } catch (e) {
      setError(messageOf(e));
      setRows([]);
    }
  }, []);
  useEffect(() => { void load(); }, [load]);
  return (
    <Page
      title="Stylesheets"
      description={<>CSS shared by template versions, put in the HTML's head when they render. <Link href="/templates">Templates</Link></>}
      actions={<Button variant="primary" onClick={() => setCreating(true)}>New stylesheet</Button>}
    >
      <FormError message={error} />
      <Table
        caption="Stylesheets"
        rows={rows}
        rowKey={(s) => s.id}
        columns={[
          { label: 'Name', cell: (s) => <Link href={`/templates/stylesheets/${s.id}`}>{s.name}</Link> },
          { label: 'Size', class: 'num', cell: (s) => `${s.css.length.toLocaleString()} characters` },
          { label: 'Updated', cell: (s) => when(s.updated_at) },
        ]}
        empty={{ title: 'No stylesheets yet', children: <p>Create one to share CSS between templates, then pick it in a version's editor. <Button variant="primary" onClick={() => setCreating(true)}>New stylesheet</Button></p> }}
      />
      <CreateStylesheet open={creating} onClose={() => setCreating(false)} />
    </Page>
  );
}

function CreateStylesheet({ open, onClose }: { open: boolean; onClose: () => void }) {
  const [, navigate] = useLocation();
  const [name, setName] = useState('');
  const [css, setCss] = useState('');
  const submit = useSubmit(async () => {
    const { stylesheet } = await ok(api.POST('/api/v1/stylesheets', { body: { name, css } }));
    navigate(`/templates/stylesheets/${stylesheet.id}`);
  }, ['name', 'css']);
  return (
    <Dialog open={open} title="New stylesheet" onClose={onClose}
      actions={<>
        <Button onClick={onClose}>Cancel</Button>
        <Button variant="primary" type="submit" form="new-stylesheet" busy={submit.busy}>Create stylesheet</Button>
      </>}>
      <form id="new-stylesheet" class="stack" onSubmit={(e) => { e.preventDefault(); void submit.run(); }}>
        <Field label="Name" name="name" value={name} required maxLength={200} error={submit.fields.name} onInput={(e) => setName(e.currentTarget.value)} />
        <Field label="CSS" name="css" error={submit.fields.css} hint="At most 100000 characters">
          {(control) => <textarea {...control} class="tp-code" rows={8} spellcheck={false} value={css} onInput={(e) => setCss(e.currentTarget.value)} />}
        </Field>
        <FormError message={submit.error} />
      </form>
    </Dialog>
  );
}
