// Who you are and the project a new session starts in.
import { useState } from 'preact/hooks';
import { app } from '../../api/client';
import { ok } from '../../api/errors';
import { useSubmit } from '../../api/use-submit';
import { useSignedIn } from '../../session';
import { Button, Field, FormError, useToast } from '../../ui';

export function Profile() {
  const { me, refresh } = useSignedIn();
  const toast = useToast();
  const [projectId, setProjectId] = useState(me.user.default_project_id ?? me.memberships[0]?.project_id ?? '');
  const save = useSubmit(async () => {
    await ok(app.PUT('/app/api/account/default-project', { body: { project_id: projectId } }));
    await refresh();
    toast('Default project saved');
  }, ['project_id']);
  return (
    <section class="card" aria-labelledby="profile-title">
      <h2 id="profile-title">{me.user.name || me.user.email}</h2>
      <p class="card-lead">{me.user.email} {me.user.email_verified ? <span class="badge badge-ok">Verified</span> : <span class="badge badge-warn">Not verified</span>}</p>
      {me.memberships.length > 0 ? (
        <form class="inline-form" onSubmit={(e) => { e.preventDefault(); void save.run(); }}>
          <Field label="Default project" name="project_id" hint="Where a new sign-in starts." error={save.fields.project_id}>
            {(control) => <select {...control} value={projectId} onChange={(e) => setProjectId(e.currentTarget.value)}>{me.memberships.map((m) => <option value={m.project_id}>{m.project_name}</option>)}</select>}
          </Field>
          <Button type="submit" busy={save.busy} disabled={projectId === me.user.default_project_id}>Save default</Button>
        </form>
      ) : <p class="muted">You are in no project yet: ask a project's admin for an invitation.</p>}
      <FormError message={save.error} />
    </section>
  );
}
