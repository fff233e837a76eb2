// One stylesheet: rename it, change its CSS (refused once a version using it
// was activated: the API says so next to the CSS), or delete it.
import { useEffect, useState } from 'preact/hooks';
import { Link, useLocation } from 'wouter-preact';
import { api, type ApiSchemas } from '../../api/client';
import { messageOf, ok } from '../../api/errors';
import { useSubmit } from '../../api/use-submit';
import type { PageProps } from '../../routes';
import { Button, Dialog, EmptyState, Field, FormError, Page, useToast } from '../../ui';
import { when } from './format';
import './templates.css';

export default function StylesheetPage({ params }: PageProps<{ id: string }>) {
  const toast = useToast();
  const [, navigate] = useLocation();
  const [sheet, setSheet] = useState<ApiSchemas['Stylesheet'] | null>();
  const [error, setError] = useState<string>();
  const [name, setName] = useState('');
  const [css, setCss] = useState('');
  const [deleting, setDeleting] = useState(false);
  useEffect(() => {
    void ok(api.GET('/api/v1/stylesheets/{id}', { params: { path: { id: params.id } } })).then(({ stylesheet }) => {
      setSheet(stylesheet);
      setName(stylesheet.name);
      setCss(stylesheet.css);
    }, (e) => { setError(messageOf(e)); setSheet(null); });
  }, [params.id]);
  const save = useSubmit(async () => {
    if (!sheet) return;
    const body = { ...(name !== sheet.name ? { name } : {}), ...(css !== sheet.css ? { css } : {}) };
    const { stylesheet } = await ok(api.PATCH('/api/v1/stylesheets/{id}', { params: { path: { id: params.id } }, body }));
    setSheet(stylesheet);
    toast('Stylesheet saved');
  }, ['name', 'css']);
  const remove = useSubmit(async () => {
    await ok(api.DELETE('/api/v1/stylesheets/{id}', { params: { path: { id: params.id } } }));
    toast('Stylesheet deleted');
    navigate('/templates/stylesheets');
  });
  if (sheet === undefined) return <p class="loading" role="status">Loading…</p>;
  if (sheet === null) {
    return <Page title="Stylesheet"><EmptyState title="This stylesheet could not be read"><p>{error} <Link href="/templates/stylesheets">Back to the stylesheets</Link></p></EmptyState></Page>;
  }
  const changed = name !== sheet.name || css !== sheet.css;
  return (
    <Page title={sheet.name} description={<>Updated {when(sheet.updated_at)} · <Link href="/templates/stylesheets">All stylesheets</Link></>}
      actions={<Button variant="danger" onClick={() => setDeleting(true)}>Delete</Button>}>
      <form class="stack tp-form-wide" onSubmit={(e) => { e.preventDefault(); void save.run(); }}>
        <Field label="Name" name="name" value={name} required maxLength={200} error={save.fields.name} onInput={(e) => setName(e.currentTarget.value)} />
        <Field label="CSS" name="css" error={save.fields.css}
          hint="Once a version naming this stylesheet was activated its CSS is frozen (what went live stays as it was): make a new stylesheet then">
          {(control) => <textarea {...control} class="tp-code" rows={18} spellcheck={false} value={css} onInput={(e) => setCss(e.currentTarget.value)} />}
        </Field>
        <FormError message={save.error} />
        <div><Button variant="primary" type="submit" busy={save.busy} disabled={!changed}>Save stylesheet</Button></div>
      </form>
      <Dialog open={deleting} title={`Delete ${sheet.name}?`} onClose={() => setDeleting(false)}
        actions={<>
          <Button onClick={() => setDeleting(false)}>Cancel</Button>
          <Button variant="danger" busy={remove.busy} onClick={() => void remove.run()}>Delete stylesheet</Button>
        </>}>
        <p>A stylesheet that a version names cannot be deleted: the answer says which.</p>
        <FormError message={remove.error} />
      </Dialog>
    </Page>
  );
}
