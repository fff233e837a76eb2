// /account/members: the current project's members (role or custom group,
// change, remove), the pending invitations (invite, revoke) and, for owners
// and admins, the custom groups (member-groups.tsx). The ownership
// rules are the API's: only an owner's session grants, changes or removes an
// owner; the refusal (403, or 409 for the last owner) is shown next to the
// control that asked.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, type ApiSchemas } from '../../api/client';
import { messageOf, ok } from '../../api/errors';
import { useSubmit } from '../../api/use-submit';
import { useSignedIn } from '../../session';
import { Button, Dialog, EmptyState, Field, FormError, Page, Table, useToast } from '../../ui';
import { AccountTabs, when } from './tabs';
import { MemberGroups } from './member-groups';
import './account.css';

type Member = ApiSchemas['Member'];
type Invitation = ApiSchemas['Invitation'];
type Group = ApiSchemas['MemberGroup'];
type Role = Member['role'];

const ROLES: Role[] = ['member', 'admin', 'owner'];

/** A role and an optional custom group as one choice: `role:admin` or `group:<id>` (a group member keeps the role `member`). */
function choiceOf(role: Role, groupId: string | null): string {
  return groupId ? `group:${groupId}` : `role:${role}`;
}
function fromChoice(choice: string): { role: Role; group_id: string | null } {
  return choice.startsWith('group:') ? { role: 'member', group_id: choice.slice(6) } : { role: choice.slice(5) as Role, group_id: null };
}

function RoleSelect({ control, value, onChange, groups }: { control: object; value: string; onChange: (v: string) => void; groups: Group[] }) {
  return (
    <select {...control} value={value} onChange={(e) => onChange(e.currentTarget.value)}>
      <optgroup label="Roles">{ROLES.map((r) => <option value={`role:${r}`}>{r[0]!.toUpperCase() + r.slice(1)}</option>)}</optgroup>
      {groups.length > 0 && <optgroup label="Custom groups">{groups.map((g) => <option value={`group:${g.id}`}>{g.name}</option>)}</optgroup>}
    </select>
  );
}

export default function Members() {
  const { me, project } = useSignedIn();
  const toast = useToast();
  const canManage = project?.role === 'owner' || project?.role === 'admin';
  const [members, setMembers] = useState<Member[] | undefined>();
  const [groups, setGroups] = useState<Group[]>([]);
  const [groupsRead, setGroupsRead] = useState(false);
  const [invitations, setInvitations] = useState<Invitation[] | undefined>();
  const [loadError, setLoadError] = useState<string>();
  const [invite, setInvite] = useState({ email: '', choice: 'role:member' });
  const [editing, setEditing] = useState<{ member: Member; choice: string } | undefined>();
  const [removing, setRemoving] = useState<Member | undefined>();

  const load = useCallback(async () => {
    try {
      const [m, g] = await Promise.all([ok(api.GET('/api/v1/members')), ok(api.GET('/api/v1/member-groups'))]);
      setMembers(m.members);
      setGroups(g.member_groups);
      setGroupsRead(true);
      if (canManage) setInvitations((await ok(api.GET('/api/v1/invitations'))).invitations);
    } catch (e) { setLoadError(messageOf(e)); }
  }, [canManage, project?.project_id]);
  useEffect(() => { void load(); }, [load]);

  const groupName = (id: string | null) => groups.find((g) => g.id === id)?.name;
  const sendInvite = useSubmit(async () => {
    const { role, group_id } = fromChoice(invite.choice);
    await ok(api.POST('/api/v1/invitations', { body: { email: invite.email.trim(), role, ...(group_id ? { group_id } : {}) } }));
    toast(`Invitation sent to ${invite.email.trim()}`);
    setInvite({ email: '', choice: invite.choice });
    await load();
  }, ['email', 'role', 'group_id']);
  const revoke = useSubmit(async (i: Invitation) => {
    await ok(api.DELETE('/api/v1/invitations/{id}', { params: { path: { id: i.id } } }));
    toast(`Invitation to ${i.email} revoked`);
    await load();
  });
  const change = useSubmit(async () => {
    if (!editing) return;
    const body = fromChoice(editing.choice);
    await ok(api.PATCH('/api/v1/members/{userId}', { params: { path: { userId: editing.member.user_id } }, body }));
    toast(`${editing.member.email} updated`);
    setEditing(undefined);
    await load();
  }, ['role', 'group_id']);
  const remove = useSubmit(async () => {
    if (!removing) return;
    await ok(api.DELETE('/api/v1/members/{userId}', { params: { path: { userId: removing.user_id } } }));
    toast(`${removing.email} removed`);
    setRemoving(undefined);
    await load();
  });

  if (!project) {
    return <Page title="Members"><AccountTabs /><EmptyState title="No project selected"><p>Pick a project at the top to see its members.</p></EmptyState></Page>;
  }
  return (
    <Page title="Members" description={`Who works in ${project.project_name}, and with what role.`}>
      <AccountTabs />
      {loadError && <FormError message={loadError} />}
      <Table
        caption={`Members of ${project.project_name}`}
        rows={loadError ? [] : members}
        rowKey={(m) => m.user_id}
        columns={[
          { label: 'Member', cell: (m) => <span><strong>{m.name || m.email}</strong>{m.user_id === me.user.id && <> <span class="badge">You</span></>}{m.name && m.name !== m.email && <><br /><span class="muted">{m.email}</span></>}</span> },
          { label: 'Role', cell: (m) => (m.group_id ? <>{groupName(m.group_id) ?? 'Custom group'} <span class="muted">(group)</span></> : m.role) },
          { label: 'Since', cell: (m) => when(m.created_at) },
          ...(canManage ? [{ label: 'Actions', class: 'actions', cell: (m: Member) => (
            <div class="row-actions">
              <Button variant="ghost" aria-label={`Change role of ${m.email}`} onClick={() => { change.reset(); setEditing({ member: m, choice: choiceOf(m.role, m.group_id) }); }}>Change role</Button>
              <Button variant="ghost" aria-label={`Remove ${m.email}`} onClick={() => { remove.reset(); setRemoving(m); }}>Remove</Button>
            </div>
          ) }] : []),
        ]}
        empty={{ title: 'No members', children: <p>Invite someone below.</p> }}
      />

      {canManage ? (
        <section class="card" aria-labelledby="invite-title">
          <h2 id="invite-title">Invite someone</h2>
          <p class="card-lead">They get an email with a link to join{project.role === 'admin' ? '. Only an owner can invite an owner.' : '.'}</p>
          <form class="inline-form" onSubmit={(e) => { e.preventDefault(); void sendInvite.run(); }}>
            <Field label="Email address" name="email" type="email" autoComplete="off" value={invite.email} onInput={(e) => setInvite({ ...invite, email: e.currentTarget.value })} error={sendInvite.fields.email} required />
            <Field label="Invite as" name="role" error={sendInvite.fields.role ?? sendInvite.fields.group_id}>
              {(control) => <RoleSelect control={control} value={invite.choice} onChange={(choice) => setInvite({ ...invite, choice })} groups={groups} />}
            </Field>
            <Button type="submit" variant="primary" busy={sendInvite.busy}>Send invitation</Button>
          </form>
          <FormError message={sendInvite.error} />

          <h3>Pending invitations</h3>
          <Table
            caption="Pending invitations"
            rows={invitations}
            rowKey={(i) => i.id}
            columns={[
              { label: 'Email', cell: (i) => i.email },
              { label: 'Role', cell: (i) => groupName(i.group_id) ?? i.role },
              { label: 'Expires', cell: (i) => when(i.expires_at) },
              { label: 'Actions', class: 'actions', cell: (i) => <Button variant="ghost" aria-label={`Revoke the invitation to ${i.email}`} onClick={() => void revoke.run(i)}>Revoke</Button> },
            ]}
            empty={{ title: 'No pending invitations', children: <p>Invitations you send wait here until they are accepted or expire.</p> }}
          />
          <FormError message={revoke.error} />
        </section>
      ) : <p class="muted">Only the project's owners and admins invite and change members.</p>}
      {canManage && <MemberGroups groups={groupsRead ? groups : undefined} onChange={load} />}

      <Dialog open={!!editing} title={`Change role of ${editing?.member.email ?? ''}`} onClose={() => setEditing(undefined)}
        actions={<><Button variant="ghost" onClick={() => setEditing(undefined)}>Cancel</Button><Button variant="primary" type="submit" form="change-role" busy={change.busy}>Save role</Button></>}>
        <form id="change-role" onSubmit={(e) => { e.preventDefault(); void change.run(); }}>
          <Field label="New role" name="role" error={change.fields.role ?? change.fields.group_id ?? change.error}>
            {(control) => <RoleSelect control={control} value={editing?.choice ?? ''} onChange={(choice) => editing && setEditing({ ...editing, choice })} groups={groups} />}
          </Field>
        </form>
      </Dialog>
      <Dialog open={!!removing} title={`Remove ${removing?.email ?? ''}?`} onClose={() => setRemoving(undefined)}
        actions={<><Button variant="ghost" onClick={() => setRemoving(undefined)}>Cancel</Button><Button variant="danger" busy={remove.busy} onClick={() => void remove.run()}>Remove member</Button></>}>
        <p>They lose access to {project.project_name} from their next request. Their account stays.</p>
        <FormError message={remove.error} />
      </Dialog>
    </Page>
  );
}
