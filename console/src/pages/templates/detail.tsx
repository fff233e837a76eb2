// One template: its versions (newest first), which one is active, and the
// release flow's last steps: activate a version, roll back to one that was
// live before, send a test of any version to one mailbox.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { Link, useLocation } from 'wouter-preact';
import { api, type ApiSchemas } from '../../api/client';
import { messageOf, ok } from '../../api/errors';
import { useSubmit } from '../../api/use-submit';
import type { PageProps } from '../../routes';
import { Button, Dialog, EmptyState, Field, FormError, Page, Table, useToast } from '../../ui';
import { when } from './format';
import './templates.css';
import { TestSend } from './test-send';

type Template = ApiSchemas['TemplateWithVersions'];
type Version = ApiSchemas['TemplateVersion'];

export default function TemplateDetail({ params }: PageProps<{ id: string }>) {
  const toast = useToast();
  const [, navigate] = useLocation();
  const [template, setTemplate] = useState<Template | null>();
  const [error, setError] = useState<string>();
  const [testing, setTesting] = useState<Version | undefined>();
  const [confirm, setConfirm] = useState<{ version: Version; rollback: boolean } | undefined>();
  const [deleting, setDeleting] = useState(false);
  const load = useCallback(async () => {
    try {
      setTemplate((await ok(api.GET('/api/v1/templates/{templateId}', { params: { path: { templateId: params.id } } }))).template);
    } catch (e) {
      setError(messageOf(e));
      setTemplate(null);
    }
  }, [params.id]);
  useEffect(() => { void load(); }, [load]);

  const newVersion = useSubmit(async (from?: Version) => {
    // A new draft starts from the given version (or the newest): same stylesheet, sample data and localizations.
    const base = from ?? template?.versions[0];
    const { version } = await ok(api.POST('/api/v1/templates/{templateId}/versions', {
      params: { path: { templateId: params.id } },
      body: base ? { stylesheet_id: base.stylesheet_id ?? undefined, sample_data: base.sample_data ?? undefined } : {},
    }));
    if (base?.languages.length) {
      const { localizations } = await ok(api.GET('/api/v1/templates/{templateId}/versions/{versionId}/localizations', { params: { path: { templateId: params.id, versionId: base.id } } }));
      await ok(api.PUT('/api/v1/templates/{templateId}/versions/{versionId}/localizations', {
        params: { path: { templateId: params.id, versionId: version.id } },
        body: { localizations: localizations.map((l) => ({ language: l.language, subject: l.subject, html: l.html ?? undefined, text: l.text ?? undefined })) },
      }));
    }
    navigate(`/templates/${params.id}/versions/${version.id}`);
  });

  const activate = useSubmit(async (version: Version, rollback: boolean) => {
    const answer = await ok(api.POST('/api/v1/templates/{templateId}/activate/{versionId}', { params: { path: { templateId: params.id, versionId: version.id } } }));
    setTemplate(answer.template);
    setConfirm(undefined);
    toast(rollback ? `Rolled back to version ${version.version}` : `Version ${version.version} is active`);
  });

  const remove = useSubmit(async () => {
    await ok(api.DELETE('/api/v1/templates/{templateId}', { params: { path: { templateId: params.id } } }));
    toast('Template deleted');
    navigate('/templates');
  });

  if (template === undefined) return <p class="loading" role="status">Loading…</p>;
  if (template === null) {
    return (
      <Page title="Template">
        <EmptyState title="This template could not be read"><p>{error} <Link href="/templates">Back to the templates</Link></p></EmptyState>
      </Page>
    );
  }
  const active = template.versions.find((v) => v.active);
  return (
    <Page
      title={template.name}
      description={<>{template.description ?? 'A template'} · default language <code>{template.default_language}</code> · <Link href="/templates">All templates</Link></>}
      actions={<>
        <Button onClick={() => setTesting(active ?? template.versions[0])} disabled={!template.versions.length}>Send a test</Button>
        <Button variant="primary" busy={newVersion.busy} onClick={() => void newVersion.run()}>New version</Button>
      </>}
    >
      <FormError message={newVersion.error ?? activate.error} />
      <p class="tp-template-status">
        {active
          ? <>Sends by this template use <strong>version {active.version}</strong> ({active.languages.join(', ') || 'no languages'}).</>
          : <>No version is active yet: sends by this template are refused until you activate one.</>}
      </p>
      <Table
        caption={`Versions of ${template.name}`}
        rows={template.versions}
        rowKey={(v) => v.id}
        columns={[
          { label: 'Version', cell: (v) => <Link href={`/templates/${template.id}/versions/${v.id}`}>Version {v.version}</Link> },
          { label: 'Status', cell: (v) => <VersionStatus version={v} /> },
          { label: 'Languages', cell: (v) => (v.languages.length ? v.languages.join(', ') : <span class="tp-muted">none written</span>) },
          { label: 'Created', cell: (v) => when(v.created_at) },
          {
            label: 'Actions', cell: (v) => (
              <div class="tp-row-actions">
                {!v.active && (
                  <Button variant={v.first_activated_at ? 'secondary' : 'primary'} disabled={!v.languages.length}
                    onClick={() => setConfirm({ version: v, rollback: Boolean(v.first_activated_at) && Boolean(active) && v.version < (active?.version ?? 0) })}
                    aria-label={`${v.first_activated_at ? 'Roll back to' : 'Activate'} version ${v.version}`}>
                    {v.first_activated_at ? 'Roll back' : 'Activate'}
                  </Button>
                )}
                <Button variant="ghost" onClick={() => setTesting(v)} aria-label={`Send a test of version ${v.version}`}>Test</Button>
                <Button variant="ghost" onClick={() => void newVersion.run(v)} aria-label={`Copy version ${v.version} as a new draft`}>Copy</Button>
              </div>
            ),
          },
        ]}
        empty={{ title: 'No versions yet', children: <p>Write the first version: <Button variant="primary" onClick={() => void newVersion.run()}>New version</Button></p> }}
      />
      <details class="tp-danger-zone">
        <summary>Delete this template</summary>
        <p>Deletes every version, the active one too. Sends by this template are refused from then on; sent mail keeps its log.</p>
        <Button variant="danger" onClick={() => setDeleting(true)}>Delete template</Button>
      </details>
      <Dialog
        open={Boolean(confirm)}
        title={confirm?.rollback ? `Roll back to version ${confirm.version.version}?` : `Activate version ${confirm?.version.version ?? ''}?`}
        onClose={() => setConfirm(undefined)}
        actions={<>
          <Button onClick={() => setConfirm(undefined)}>Cancel</Button>
          <Button variant="primary" busy={activate.busy} onClick={() => confirm && void activate.run(confirm.version, confirm.rollback)}>
            {confirm?.rollback ? 'Roll back' : 'Activate'}
          </Button>
        </>}
      >
        <p>The next send by <strong>{template.name}</strong> renders version {confirm?.version.version}. It is frozen from now on: to change it later, make a new version.</p>
        <FormError message={activate.error} />
      </Dialog>
      <Dialog
        open={deleting}
        title={`Delete ${template.name}?`}
        onClose={() => setDeleting(false)}
        actions={<>
          <Button onClick={() => setDeleting(false)}>Cancel</Button>
          <Button variant="danger" busy={remove.busy} onClick={() => void remove.run()}>Delete template</Button>
        </>}
      >
        <p>Every version and localization goes with it. This cannot be undone.</p>
        <FormError message={remove.error} />
      </Dialog>
      {testing && <TestSend template={template} version={testing} onClose={() => setTesting(undefined)} />}
    </Page>
  );
}

export function VersionStatus({ version }: { version: Version }) {
  if (version.active) return <span class="tp-badge tp-badge-ok">Active</span>;
  if (version.first_activated_at) return <span class="tp-badge" title={`First active ${when(version.first_activated_at)}`}>Was active</span>;
  return <span class="tp-badge tp-badge-draft">Draft</span>;
}
