// Send a test of one version (a draft too) to one real mailbox: a real send
// (suppressions and the plan's limits apply), shown in the email log with
// origin "test". The answer links to the email there.
import { useEffect, useState } from 'preact/hooks';
import { useUniqueId } from '../../ui/unique-id';
import { Link } from 'wouter-preact';
import { api, type ApiSchemas } from '../../api/client';
import { ok } from '../../api/errors';
import { useSubmit } from '../../api/use-submit';
import { Button, Dialog, Field, FormError } from '../../ui';

type Template = ApiSchemas['TemplateWithVersions'];
type Version = ApiSchemas['TemplateVersion'];

export function TestSend({ template, version, onClose }: { template: Template; version: Version; onClose: () => void }) {
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [versionId, setVersionId] = useState(version.id);
  const chosen = template.versions.find((v) => v.id === versionId) ?? version;
  const [language, setLanguage] = useState(chosen.languages.includes(template.default_language) ? template.default_language : (chosen.languages[0] ?? ''));
  const [senders, setSenders] = useState<string[]>([]);
  const [sent, setSent] = useState<{ id: string; to: string } | undefined>();
  const listId = useUniqueId('senders');
  useEffect(() => {
    // Suggest an address at each verified domain; any mailbox of one will do.
    void ok(api.GET('/api/v1/domains')).then((d) => {
      const names = d.domains.filter((x) => x.status === 'verified').map((x) => `test@${x.name}`);
      setSenders(names);
      if (names[0]) setFrom((f) => f || names[0]!);
    }, () => setSenders([]));
  }, []);
  const submit = useSubmit(async () => {
    const answer = await ok(api.POST('/api/v1/templates/{templateId}/send-test', {
      params: { path: { templateId: template.id } },
      body: { from, to: [to], version_id: versionId, ...(language ? { language } : {}) },
    }));
    const email = answer.emails[0];
    if (email) setSent({ id: email.id, to });
  }, ['from', 'to', 'to.0', 'version_id', 'language', 'data']);
  return (
    <Dialog
      open
      title={`Send a test of ${template.name}`}
      onClose={onClose}
      actions={sent
        ? <Button variant="primary" onClick={onClose}>Done</Button>
        : <>
          <Button onClick={onClose}>Cancel</Button>
          <Button variant="primary" type="submit" form="test-send" busy={submit.busy}>Send test</Button>
        </>}
    >
      {sent
        ? <p role="status">Test sent to {sent.to}. <Link href={`/emails/${sent.id}`}>Open it in the email log</Link> to watch it go out.</p>
        : (
          <form id="test-send" class="stack" onSubmit={(e) => { e.preventDefault(); void submit.run(); }}>
            <Field label="From" name="from" value={from} required list={listId} error={submit.fields.from}
              hint="An address at a verified domain of this project" onInput={(e) => setFrom(e.currentTarget.value)} />
            <datalist id={listId}>{senders.map((s) => <option value={s} />)}</datalist>
            <Field label="To" name="to" type="email" value={to} required error={submit.fields.to ?? submit.fields['to.0']}
              hint="One real mailbox: the test is delivered and counts against the plan's limits" onInput={(e) => setTo(e.currentTarget.value)} />
            <Field label="Version" name="version_id" error={submit.fields.version_id}>
              {(control) => (
                <select {...control} value={versionId} onChange={(e) => setVersionId(e.currentTarget.value)}>
                  {template.versions.map((v) => <option value={v.id}>Version {v.version}{v.active ? ' (active)' : v.first_activated_at ? '' : ' (draft)'}</option>)}
                </select>
              )}
            </Field>
            <Field label="Language" name="language" value={language} error={submit.fields.language}
              hint={`This version has ${chosen.languages.join(', ') || 'no localizations yet'}; rendered with its sample data`} onInput={(e) => setLanguage(e.currentTarget.value)} />
            <FormError message={submit.error} />
          </form>
        )}
    </Dialog>
  );
}
