// Custom member groups of the current project (owners and admins): a named
// list of catalogue permissions a member holds instead of their role's
// (docs/console.md "Custom member groups"). Create, rename or change the list,
// delete; the API's refusals (a taken name, `*`, an unknown entry) are shown
// under the field they name.
import { useEffect, useState } from 'preact/hooks';
import { api, type ApiSchemas } from '../../api/client';
import { ok } from '../../api/errors';
import { useSubmit } from '../../api/use-submit';
import { Button, Dialog, Field, FormError, Table, useToast } from '../../ui';

type Group = ApiSchemas['MemberGroup'];
type Resource = ApiSchemas['PermissionResource'];

function PermissionChecks({ catalogue, picked, onToggle, error, idPrefix }: { catalogue: Resource[] | undefined; picked: Set<string>; onToggle: (p: string) => void; error?: string; idPrefix: string }) {
  if (catalogue === undefined) return <p class="loading">Loading permissions…</p>;
  return (
    <>
      <fieldset class="group-checks" aria-describedby={error ? `${idPrefix}-permissions-error` : undefined}>
        <legend>Permissions</legend>
        {catalogue.flatMap((r) => r.permissions.map((p) => (
          <label class="group-check" key={p}><input type="checkbox" name="permissions" value={p} checked={picked.has(p)} onChange={() => onToggle(p)} /> {p}</label>
        )))}
      </fieldset>
      {error && <p class="field-error" id={`${idPrefix}-permissions-error`}>{error}</p>}
    </>
  );
}

const toggled = (set: Set<string>, p: string) => { const n = new Set(set); if (n.has(p)) n.delete(p); else n.add(p); return n; };

/** @param onChange called after any change, so the members page re-reads its group names */
export function MemberGroups({ groups, onChange }: { groups: Group[] | undefined; onChange: () => Promise<void> }) {
  const toast = useToast();
  const [catalogue, setCatalogue] = useState<Resource[] | undefined>();
  const [name, setName] = useState('');
  const [picked, setPicked] = useState<Set<string>>(new Set());
  const [editing, setEditing] = useState<{ group: Group; name: string; picked: Set<string> } | undefined>();
  const [deleting, setDeleting] = useState<Group | undefined>();
  useEffect(() => { void ok(api.GET('/api/v1/permissions')).then((c) => setCatalogue(c.resources), () => setCatalogue([])); }, []);

  const create = useSubmit(async () => {
    const { member_group } = await ok(api.POST('/api/v1/member-groups', { body: { name: name.trim(), permissions: [...picked] } }));
    toast(`Group ${member_group.name} created`);
    setName('');
    setPicked(new Set());
    await onChange();
  }, ['name', 'permissions']);
  const save = useSubmit(async () => {
    if (!editing) return;
    await ok(api.PATCH('/api/v1/member-groups/{id}', { params: { path: { id: editing.group.id } }, body: { name: editing.name.trim(), permissions: [...editing.picked] } }));
    toast(`Group ${editing.name.trim()} saved`);
    setEditing(undefined);
    await onChange();
  }, ['name', 'permissions']);
  const remove = useSubmit(async () => {
    if (!deleting) return;
    await ok(api.DELETE('/api/v1/member-groups/{id}', { params: { path: { id: deleting.id } } }));
    toast(`Group ${deleting.name} deleted`);
    setDeleting(undefined);
    await onChange();
  });

  return (
    <section class="card" aria-labelledby="groups-title">
      <h2 id="groups-title">Custom groups</h2>
      <p class="card-lead">A group is a list of permissions; a member put in it holds that list instead of their role's.</p>
      <Table
        caption="Custom groups"
        rows={groups}
        rowKey={(g) => g.id}
        columns={[
          { label: 'Group', cell: (g) => <strong>{g.name}</strong> },
          { label: 'Permissions', cell: (g) => <span class="mono">{g.permissions.join(', ') || 'none'}</span> },
          { label: 'Members', class: 'num', cell: (g) => g.members },
          { label: 'Actions', class: 'actions', cell: (g) => (
            <div class="row-actions">
              <Button variant="ghost" aria-label={`Edit group ${g.name}`} onClick={() => { save.reset(); setEditing({ group: g, name: g.name, picked: new Set(g.permissions) }); }}>Edit</Button>
              <Button variant="ghost" aria-label={`Delete group ${g.name}`} onClick={() => { remove.reset(); setDeleting(g); }}>Delete</Button>
            </div>
          ) },
        ]}
        empty={{ title: 'No custom groups', children: <p>Create one below when a role gives someone too much or too little.</p> }}
      />
      <h3>Create a group</h3>
      <form class="stack" onSubmit={(e) => { e.preventDefault(); void create.run(); }}>
        <Field label="Group name" name="name" value={name} onInput={(e) => setName(e.currentTarget.value)} error={create.fields.name} required />
        <PermissionChecks catalogue={catalogue} picked={picked} onToggle={(p) => setPicked((s) => toggled(s, p))} error={create.fields.permissions} idPrefix="create-group" />
        <div><Button type="submit" variant="primary" busy={create.busy}>Create group</Button></div>
        <FormError message={create.error} />
      </form>
      <Dialog open={!!editing} title={`Edit group ${editing?.group.name ?? ''}`} onClose={() => setEditing(undefined)}
        actions={<><Button variant="ghost" onClick={() => setEditing(undefined)}>Cancel</Button><Button variant="primary" type="submit" form="edit-group" busy={save.busy}>Save group</Button></>}>
        <form id="edit-group" class="stack" onSubmit={(e) => { e.preventDefault(); void save.run(); }}>
          <Field label="Group name" name="name" value={editing?.name ?? ''} onInput={(e) => editing && setEditing({ ...editing, name: e.currentTarget.value })} error={save.fields.name} required />
          <PermissionChecks catalogue={catalogue} picked={editing?.picked ?? new Set()} onToggle={(p) => editing && setEditing({ ...editing, picked: toggled(editing.picked, p) })} error={save.fields.permissions} idPrefix="edit-group" />
          <FormError message={save.error} />
        </form>
      </Dialog>
      <Dialog open={!!deleting} title={`Delete group ${deleting?.name ?? ''}?`} onClose={() => setDeleting(undefined)}
        actions={<><Button variant="ghost" onClick={() => setDeleting(undefined)}>Cancel</Button><Button variant="danger" busy={remove.busy} onClick={() => void remove.run()}>Delete group</Button></>}>
        <p>{deleting?.members ? 'Members in it go back to their role.' : 'No member is in it.'}</p>
        <FormError message={remove.error} />
      </Dialog>
    </section>
  );
}
