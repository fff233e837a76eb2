// Passkeys: add one through the browser's WebAuthn (registration options →
// navigator.credentials.create() → the answer), rename, delete. Adding,
// renaming and deleting need a recent sign-in: the API's 403 says so and is
// shown as it comes.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { app, type AppSchemas } from '../../api/client';
import { messageOf, ok } from '../../api/errors';
import { useSubmit } from '../../api/use-submit';
import { ceremonyMessage, createCredential, passkeysSupported } from '../../auth/webauthn';
import { Button, Dialog, Field, FormError, Table, useToast } from '../../ui';
import { when } from './tabs';

type Passkey = AppSchemas['Passkey'];

export function Passkeys() {
  const toast = useToast();
  const [rows, setRows] = useState<Passkey[] | undefined>();
  const [loadError, setLoadError] = useState<string>();
  const [name, setName] = useState('');
  const [renaming, setRenaming] = useState<Passkey | undefined>();
  const [newName, setNewName] = useState('');
  const [deleting, setDeleting] = useState<Passkey | undefined>();

  const load = useCallback(async () => {
    try { setRows((await ok(app.GET('/app/api/account/passkeys'))).passkeys); } catch (e) { setLoadError(messageOf(e)); }
  }, []);
  useEffect(() => { void load(); }, [load]);

  const add = useSubmit(async () => {
    const options = await ok(app.POST('/app/api/account/passkeys/registration-options'));
    let response;
    try {
      response = await createCredential(options as Record<string, any>);
    } catch (e) {
      throw new Error(ceremonyMessage(e) ?? messageOf(e));
    }
    await ok(app.POST('/app/api/account/passkeys', { body: { name: name.trim(), response: response as AppSchemas['PasskeyRegistrationResponse'] } }));
    setName('');
    toast('Passkey added');
    await load();
  }, ['name']);
  const rename = useSubmit(async () => {
    if (!renaming) return;
    await ok(app.PATCH('/app/api/account/passkeys/{id}', { params: { path: { id: renaming.id } }, body: { name: newName.trim() } }));
    setRenaming(undefined);
    toast('Passkey renamed');
    await load();
  }, ['name']);
  const remove = useSubmit(async () => {
    if (!deleting) return;
    await ok(app.DELETE('/app/api/account/passkeys/{id}', { params: { path: { id: deleting.id } } }));
    setDeleting(undefined);
    toast('Passkey deleted');
    await load();
  });

  return (
    <section class="card" aria-labelledby="passkeys-title">
      <h2 id="passkeys-title">Passkeys</h2>
      <p class="card-lead">Sign in with your device's screen lock or a security key instead of a password. Adding, renaming or deleting one needs a sign-in in the last 15 minutes.</p>
      {loadError ? <FormError message={loadError} /> : (
        <Table
          caption="Your passkeys"
          rows={rows}
          rowKey={(p) => p.id}
          columns={[
            { label: 'Name', cell: (p) => p.name },
            { label: 'Added', cell: (p) => when(p.created_at) },
            { label: 'Last used', cell: (p) => when(p.last_used_at) },
            { label: 'Synced', cell: (p) => (p.backed_up ? 'Yes' : 'No') },
            { label: 'Actions', class: 'actions', cell: (p) => (
              <div class="row-actions">
                <Button variant="ghost" aria-label={`Rename ${p.name}`} onClick={() => { setNewName(p.name); rename.reset(); setRenaming(p); }}>Rename</Button>
                <Button variant="ghost" aria-label={`Delete ${p.name}`} onClick={() => { remove.reset(); setDeleting(p); }}>Delete</Button>
              </div>
            ) },
          ]}
          empty={{ title: 'No passkeys yet', children: <p>Name one below and add it: your browser asks your device or security key.</p> }}
        />
      )}
      {passkeysSupported() ? (
        <form class="inline-form" onSubmit={(e) => { e.preventDefault(); void add.run(); }}>
          <Field label="Passkey name" name="name" placeholder="Work laptop" maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} error={add.fields.name} required />
          <Button type="submit" variant="primary" busy={add.busy}>Add a passkey</Button>
        </form>
      ) : <p class="muted">This browser cannot make passkeys.</p>}
      <FormError message={add.error} />

      <Dialog open={!!renaming} title="Rename passkey" onClose={() => setRenaming(undefined)}
        actions={<><Button variant="ghost" onClick={() => setRenaming(undefined)}>Cancel</Button><Button variant="primary" type="submit" form="rename-passkey" busy={rename.busy}>Save name</Button></>}>
        <form id="rename-passkey" onSubmit={(e) => { e.preventDefault(); void rename.run(); }}>
          <Field label="New name" name="name" maxLength={100} value={newName} onInput={(e) => setNewName(e.currentTarget.value)} error={rename.fields.name} required />
          <FormError message={rename.error} />
        </form>
      </Dialog>
      <Dialog open={!!deleting} title="Delete passkey?" onClose={() => setDeleting(undefined)}
        actions={<><Button variant="ghost" onClick={() => setDeleting(undefined)}>Cancel</Button><Button variant="danger" busy={remove.busy} onClick={() => void remove.run()}>Delete passkey</Button></>}>
        <p>“{deleting?.name}” will no longer sign you in.</p>
        <FormError message={remove.error} />
      </Dialog>
    </section>
  );
}
