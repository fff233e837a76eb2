// Every user of the service: add one, set a password (which signs out every
// session of theirs when it replaces one), make one a platform admin or stop
// them being one (docs/console.md "Platform admins in the console").
import { useCallback, useEffect, useState } from 'preact/hooks';
import type { ApiSchemas } from '../../api/client';
import { messageOf, ok } from '../../api/errors';
import { useSubmit } from '../../api/use-submit';
import { Button, Dialog, Field, FormError, Table, useToast } from '../../ui';
import { when } from '../account/tabs';
import { useAdmin } from './client';

type User = ApiSchemas['User'];

export function Users() {
  const admin = useAdmin();
  const toast = useToast();
  const [rows, setRows] = useState<User[] | undefined>();
  const [loadError, setLoadError] = useState<string>();
  const [form, setForm] = useState({ email: '', name: '' });
  const [pwFor, setPwFor] = useState<User | undefined>();
  const [password, setPassword] = useState('');
  const load = useCallback(async () => {
    try { setRows((await ok(admin.GET('/api/v1/admin/users'))).users); } catch (e) { setLoadError(messageOf(e)); }
  }, [admin]);
  useEffect(() => { void load(); }, [load]);
  const create = useSubmit(async () => {
    const { user } = await ok(admin.POST('/api/v1/admin/users', { body: { email: form.email.trim(), name: form.name.trim() } }));
    toast(`${user.email} added`);
    setForm({ email: '', name: '' });
    await load();
  }, ['email', 'name']);
  const setPw = useSubmit(async () => {
    if (!pwFor) return;
    const { replaced } = await ok(admin.PUT('/api/v1/admin/users/{id}/password', { params: { path: { id: pwFor.id } }, body: { password } }));
    toast(replaced ? `Password replaced: ${pwFor.email} is signed out everywhere` : `Password set for ${pwFor.email}`);
    setPassword('');
    setPwFor(undefined);
  }, ['password']);
  const [adminError, setAdminError] = useState<string>();
  const setPlatformAdmin = async (u: User, grant: boolean) => {
    setAdminError(undefined);
    try {
      const path = { params: { path: { id: u.id } } };
      await ok(grant ? admin.PUT('/api/v1/admin/users/{id}/platform-admin', path) : admin.DELETE('/api/v1/admin/users/{id}/platform-admin', path));
      toast(grant ? `${u.email} is a platform admin` : `${u.email} is no longer a platform admin`);
      await load();
    } catch (e) { setAdminError(messageOf(e)); }
  };
  return (
    <>
      {loadError && <FormError message={loadError} />}
      <FormError message={adminError} />
      <Table
        caption="Users"
        rows={loadError ? [] : rows}
        rowKey={(u) => u.id}
        columns={[
          { label: 'User', cell: (u) => <span><strong>{u.name || u.email}</strong>{u.name && u.name !== u.email && <><br /><span class="muted">{u.email}</span></>}</span> },
          { label: 'Id', cell: (u) => <code class="wrap-anywhere">{u.id}</code> },
          { label: 'Default project', cell: (u) => (u.default_project_id ? <code class="wrap-anywhere">{u.default_project_id}</code> : '—') },
          { label: 'Platform admin', cell: (u) => (u.platform_admin ? <span class="badge badge-ok">Admin</span> : <span class="muted">No</span>) },
          { label: 'Created', cell: (u) => when(u.created_at) },
          { label: 'Actions', class: 'actions', cell: (u) => (
            <span class="row-actions">
              <Button variant="ghost" aria-label={`Set password for ${u.email}`} onClick={() => { setPw.reset(); setPwFor(u); }}>Set password</Button>
              {u.platform_admin
                ? <Button variant="ghost" aria-label={`Revoke admin: ${u.email}`} onClick={() => void setPlatformAdmin(u, false)}>Revoke admin</Button>
                : <Button variant="ghost" aria-label={`Make admin: ${u.email}`} onClick={() => void setPlatformAdmin(u, true)}>Make admin</Button>}
            </span>
          ) },
        ]}
        empty={{ title: 'No users yet', children: <p>Add the first one below, then give them a password or invite them to a project.</p> }}
      />
      <section class="card" aria-labelledby="add-user-title">
        <h2 id="add-user-title">Add a user</h2>
        <form class="inline-form" onSubmit={(e) => { e.preventDefault(); void create.run(); }}>
          <Field label="Email" name="email" type="email" autoComplete="off" value={form.email} onInput={(e) => setForm({ ...form, email: e.currentTarget.value })} error={create.fields.email} required />
          <Field label="Name" name="name" autoComplete="off" value={form.name} onInput={(e) => setForm({ ...form, name: e.currentTarget.value })} error={create.fields.name} required />
          <Button type="submit" variant="primary" busy={create.busy}>Add user</Button>
        </form>
        <FormError message={create.error} />
      </section>
      <Dialog open={!!pwFor} title={`Set the password of ${pwFor?.email ?? ''}`} onClose={() => setPwFor(undefined)}
        actions={<><Button variant="ghost" onClick={() => setPwFor(undefined)}>Cancel</Button><Button variant="primary" type="submit" form="set-password" busy={setPw.busy}>Set password</Button></>}>
        <form id="set-password" onSubmit={(e) => { e.preventDefault(); void setPw.run(); }}>
          <Field label="New password" name="password" type="password" autoComplete="new-password" value={password} onInput={(e) => setPassword(e.currentTarget.value)} error={setPw.fields.password} hint="Replacing a password signs the user out of every session." required />
          <FormError message={setPw.error} />
        </form>
      </Dialog>
    </>
  );
}
