// API keys: create one with the permissions picked from the catalogue (its
// token shown once), revoke, delete.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, type ApiSchemas } from '../../api/client';
import { messageOf, ok } from '../../api/errors';
import { useSubmit } from '../../api/use-submit';
import { Button, Dialog, Field, FormError, Page, ShownOnce, Table, useToast } from '../../ui';
import { when } from '../emails/format';
import { StatusBadge } from '../emails/status-badge';
import '../emails/mail.css';

type ApiKey = ApiSchemas['ApiKey'];
type Resource = ApiSchemas['PermissionResource'];

export default function KeysPage() {
  const toast = useToast();
  const [keys, setKeys] = useState<ApiKey[] | undefined>(undefined);
  const [error, setError] = useState<string | undefined>();
  const [creating, setCreating] = useState(false);
  // The new token lives here only, until "I have copied it".
  const [created, setCreated] = useState<{ name: string; token: string } | null>(null);
  const [confirm, setConfirm] = useState<{ key: ApiKey; action: 'revoke' | 'delete' } | null>(null);
  const load = useCallback(async () => {
    try { setKeys((await ok(api.GET('/api/v1/api-keys'))).api_keys); } catch (e) { setError(messageOf(e)); setKeys([]); }
  }, []);
  useEffect(() => { void load(); }, [load]);

  const act = useSubmit(async (key: ApiKey, action: 'revoke' | 'delete') => {
    if (action === 'revoke') await ok(api.POST('/api/v1/api-keys/{id}/revoke', { params: { path: { id: key.id } } }));
    else await ok(api.DELETE('/api/v1/api-keys/{id}', { params: { path: { id: key.id } } }));
    toast(action === 'revoke' ? `Key ${key.name} revoked` : `Key ${key.name} deleted`);
    setConfirm(null);
    await load();
  });

  return (
    <Page title="API keys" description="Keys your code uses to call the API, each with only the permissions it needs."
      actions={<Button variant="primary" onClick={() => setCreating(true)}>Create key</Button>}>
      {created && (
        <div class="section">
          <h2>Token of {created.name}</h2>
          <ShownOnce label="API key token" value={created.token} onDone={() => setCreated(null)} />
        </div>
      )}
      <FormError message={error} />
      <Table caption="API keys" rows={keys} rowKey={(k) => k.id}
        empty={{ title: 'No API key yet', children: <p>Create one to send from your code: pick what it may do, copy its token once.</p> }}
        columns={[
          { label: 'Name', cell: (k) => <strong>{k.name}</strong> },
          { label: 'Prefix', cell: (k) => <code>{k.key_prefix}</code> },
          { label: 'Permissions', cell: (k) => <span class="mono">{k.permissions.join(', ') || 'none'}</span> },
          { label: 'State', cell: (k) => k.revoked ? <StatusBadge status="revoked" /> : <StatusBadge status="ok" label={k.sandbox ? 'sandbox' : 'active'} /> },
          { label: 'Last used', cell: (k) => when(k.last_used_at) },
          { label: 'Created', cell: (k) => when(k.created_at) },
          {
            label: 'Actions', class: 'row-actions', cell: (k) => (
              <span class="row-actions">
                {!k.revoked && <Button variant="danger" aria-label={`Revoke ${k.name}`} onClick={() => setConfirm({ key: k, action: 'revoke' })}>Revoke</Button>}
                <Button variant="ghost" aria-label={`Delete ${k.name}`} onClick={() => setConfirm({ key: k, action: 'delete' })}>Delete</Button>
              </span>
            ),
          },
        ]} />
      <CreateKey open={creating} onClose={() => setCreating(false)} onCreated={(name, token) => { setCreating(false); setCreated({ name, token }); void load(); }} />
      <Dialog open={confirm !== null} title={confirm ? `${confirm.action === 'revoke' ? 'Revoke' : 'Delete'} ${confirm.key.name}?` : ''} onClose={() => { setConfirm(null); act.reset(); }}
        actions={<>
          <Button onClick={() => setConfirm(null)}>Cancel</Button>
          <Button variant="danger" busy={act.busy} onClick={() => confirm && void act.run(confirm.key, confirm.action)}>{confirm?.action === 'revoke' ? 'Revoke key' : 'Delete key'}</Button>
        </>}>
        <p>{confirm?.action === 'revoke' ? 'Calls with this key are refused from now on; the key stays listed as revoked.' : 'The key is removed for good; calls with it are refused.'}</p>
        <FormError message={act.error} />
      </Dialog>
    </Page>
  );
}

function CreateKey({ open, onClose, onCreated }: { open: boolean; onClose: () => void; onCreated: (name: string, token: string) => void }) {
  const [catalogue, setCatalogue] = useState<Resource[] | undefined>(undefined);
  const [name, setName] = useState('');
  const [picked, setPicked] = useState<Set<string>>(new Set());
  const [full, setFull] = useState(false);
  const [sandbox, setSandbox] = useState(false);
  useEffect(() => {
    if (!open || catalogue) return;
    void ok(api.GET('/api/v1/permissions')).then((c) => setCatalogue(c.resources), () => setCatalogue([]));
  }, [open]);
  useEffect(() => { if (open) { setName(''); setPicked(new Set()); setFull(false); setSandbox(false); } }, [open]);
  const submit = useSubmit(async () => {
    const answer = await ok(api.POST('/api/v1/api-keys', { body: { name, permissions: full ? ['*'] : [...picked], allowed_ips: [], sandbox } }));
    onCreated(answer.api_key.name, answer.token);
  }, ['name', 'permissions']);
  const toggle = (p: string) => setPicked((s) => { const n = new Set(s); if (n.has(p)) n.delete(p); else n.add(p); return n; });
  return (
    <Dialog open={open} title="Create an API key" onClose={onClose}
      actions={<>
        <Button onClick={onClose}>Cancel</Button>
        <Button variant="primary" type="submit" form="create-key" busy={submit.busy}>Create key</Button>
      </>}>
      <form id="create-key" class="stack" onSubmit={(e) => { e.preventDefault(); void submit.run(); }}>
        <Field label="Name" name="name" required value={name} onInput={(e) => setName(e.currentTarget.value)} error={submit.fields.name} hint="Says where it is used: “production sender”." />
        <label class="check"><input type="checkbox" checked={full} onChange={(e) => setFull(e.currentTarget.checked)} /> Full access (every permission, also those added later)</label>
        {!full && (catalogue === undefined ? <p class="loading">Loading permissions…</p> : (
          <fieldset class="checks" aria-describedby={submit.fields.permissions ? 'permissions-error' : undefined}>
            <legend>Permissions</legend>
            {catalogue.flatMap((r) => r.permissions.map((p) => (
              <label class="check" key={p}><input type="checkbox" name="permissions" value={p} checked={picked.has(p)} onChange={() => toggle(p)} /> {p}</label>
            )))}
          </fieldset>
        ))}
        {submit.fields.permissions && <p class="field-error" id="permissions-error">{submit.fields.permissions}</p>}
        <label class="check"><input type="checkbox" checked={sandbox} onChange={(e) => setSandbox(e.currentTarget.checked)} /> Sandbox key (its mail is captured, never delivered)</label>
        <FormError message={submit.error} />
      </form>
    </Dialog>
  );
}
