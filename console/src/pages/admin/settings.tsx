// The installation's settings: each one's value and where it comes from;
// those changeable at runtime are edited here (PATCH /api/v1/admin/settings),
// the API's refusal shown next to the setting it names. Secrets are never shown.
import { useCallback, useEffect, useState } from 'preact/hooks';
import type { ApiSchemas } from '../../api/client';
import { messageOf, ok } from '../../api/errors';
import { useSubmit } from '../../api/use-submit';
import { Button, Dialog, Field, FormError, Table, useToast } from '../../ui';
import { useAdmin } from './client';

type Setting = ApiSchemas['Setting'];

const shown = (s: Setting) => (s.secret ? '•••• (secret)' : s.value === undefined ? '—' : JSON.stringify(s.value));

export function Settings() {
  const admin = useAdmin();
  const toast = useToast();
  const [rows, setRows] = useState<Setting[] | undefined>();
  const [loadError, setLoadError] = useState<string>();
  const [editing, setEditing] = useState<{ setting: Setting; text: string } | undefined>();
  const load = useCallback(async () => {
    try { setRows((await ok(admin.GET('/api/v1/admin/settings'))).settings); } catch (e) { setLoadError(messageOf(e)); }
  }, [admin]);
  useEffect(() => { void load(); }, [load]);
  const save = useSubmit(async () => {
    if (!editing) return;
    let value: unknown;
    try { value = JSON.parse(editing.text); } catch { value = editing.text; }
    await ok(admin.PATCH('/api/v1/admin/settings', { body: { [editing.setting.name]: value } }));
    toast(`${editing.setting.name} saved`);
    setEditing(undefined);
    await load();
  }, editing ? [editing.setting.name] : []);
  return (
    <>
      {loadError && <FormError message={loadError} />}
      <Table
        caption="Settings"
        rows={loadError ? [] : rows}
        rowKey={(s) => s.name}
        columns={[
          { label: 'Setting', cell: (s) => <span><code>{s.name}</code><br /><span class="muted">{s.description}</span></span> },
          { label: 'Value', cell: (s) => <code class="wrap-anywhere">{shown(s)}</code> },
          { label: 'From', cell: (s) => s.source },
          { label: 'Actions', class: 'actions', cell: (s) => (s.runtime_changeable && !s.secret
            ? <Button variant="ghost" aria-label={`Change ${s.name}`} onClick={() => { save.reset(); setEditing({ setting: s, text: s.value === undefined ? '' : JSON.stringify(s.value) }); }}>Change</Button>
            : <span class="muted">at deploy</span>) },
        ]}
        empty={{ title: 'No settings' }}
      />
      <Dialog open={!!editing} title={`Change ${editing?.setting.name ?? ''}`} onClose={() => setEditing(undefined)}
        actions={<><Button variant="ghost" onClick={() => setEditing(undefined)}>Cancel</Button><Button variant="primary" type="submit" form="edit-setting" busy={save.busy}>Save</Button></>}>
        <form id="edit-setting" onSubmit={(e) => { e.preventDefault(); void save.run(); }}>
          <Field label="Value (JSON)" name={editing?.setting.name ?? 'value'} hint={editing?.setting.description} value={editing?.text ?? ''} onInput={(e) => editing && setEditing({ ...editing, text: e.currentTarget.value })} error={editing ? save.fields[editing.setting.name] : undefined} />
          <FormError message={save.error} />
        </form>
      </Dialog>
    </>
  );
}
