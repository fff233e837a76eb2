// Plans and projects. The API makes them (POST) but lists neither yet, so this
// page creates them and shows what this visit made, ids to copy.
import { useEffect, useState } from 'preact/hooks';
import type { ApiSchemas } from '../../api/client';
import { ok } from '../../api/errors';
import { useSubmit } from '../../api/use-submit';
import { Button, CopyButton, Field, FormError, Table, useToast } from '../../ui';
import { useAdmin } from './client';

type Plan = ApiSchemas['Plan'];
type Project = ApiSchemas['Project'];

export function PlansAndProjects() {
  const admin = useAdmin();
  const toast = useToast();
  const [plans, setPlans] = useState<Plan[]>([]);
  const [projects, setProjects] = useState<Project[]>([]);
  const [users, setUsers] = useState<ApiSchemas['User'][]>([]);
  const [plan, setPlan] = useState({ name: '', hourly: '0', daily: '0' });
  const [project, setProject] = useState({ name: '', plan_id: '', owner_id: '' });
  useEffect(() => { void ok(admin.GET('/api/v1/admin/users')).then((r) => setUsers(r.users), () => {}); }, [admin]);

  const createPlan = useSubmit(async () => {
    const made = await ok(admin.POST('/api/v1/admin/plans', { body: { name: plan.name.trim(), hourly_email_limit: Number(plan.hourly), daily_email_limit: Number(plan.daily) } }));
    setPlans((p) => [made.plan, ...p]);
    setPlan({ name: '', hourly: '0', daily: '0' });
    toast(`Plan ${made.plan.name} created`);
  }, ['name', 'hourly_email_limit', 'daily_email_limit']);
  const createProject = useSubmit(async () => {
    const made = await ok(admin.POST('/api/v1/admin/projects', { body: { name: project.name.trim(), ...(project.plan_id.trim() ? { plan_id: project.plan_id.trim() } : {}), ...(project.owner_id ? { owner_id: project.owner_id } : {}) } }));
    setProjects((p) => [made.project, ...p]);
    setProject({ name: '', plan_id: project.plan_id, owner_id: '' });
    toast(`Project ${made.project.name} created`);
  }, ['name', 'plan_id', 'owner_id']);

  const idCell = (id: string, what: string) => <span class="row-actions"><code class="wrap-anywhere">{id}</code><CopyButton value={id} what={`${what} id`} /></span>;
  return (
    <>
      <section class="card" aria-labelledby="plan-title">
        <h2 id="plan-title">Create a plan</h2>
        <p class="card-lead">Sending limits a project is held to; 0 means no limit.</p>
        <form class="inline-form" onSubmit={(e) => { e.preventDefault(); void createPlan.run(); }}>
          <Field label="Plan name" name="name" value={plan.name} onInput={(e) => setPlan({ ...plan, name: e.currentTarget.value })} error={createPlan.fields.name} required />
          <Field label="Emails an hour" name="hourly_email_limit" type="number" min={0} value={plan.hourly} onInput={(e) => setPlan({ ...plan, hourly: e.currentTarget.value })} error={createPlan.fields.hourly_email_limit} />
          <Field label="Emails a day" name="daily_email_limit" type="number" min={0} value={plan.daily} onInput={(e) => setPlan({ ...plan, daily: e.currentTarget.value })} error={createPlan.fields.daily_email_limit} />
          <Button type="submit" variant="primary" busy={createPlan.busy}>Create plan</Button>
        </form>
        <FormError message={createPlan.error} />
        {plans.length > 0 && (
          <Table caption="Plans created now" rows={plans} rowKey={(p) => p.id} empty={{ title: '' }} columns={[
            { label: 'Plan', cell: (p) => p.name },
            { label: 'Per hour', class: 'num', cell: (p) => p.hourly_email_limit || 'no limit' },
            { label: 'Per day', class: 'num', cell: (p) => p.daily_email_limit || 'no limit' },
            { label: 'Id', cell: (p) => idCell(p.id, p.name) },
          ]} />
        )}
      </section>
      <section class="card" aria-labelledby="project-title">
        <h2 id="project-title">Create a project</h2>
        <p class="card-lead">Its owner can then sign in and invite the others.</p>
        <form class="inline-form" onSubmit={(e) => { e.preventDefault(); void createProject.run(); }}>
          <Field label="Project name" name="name" value={project.name} onInput={(e) => setProject({ ...project, name: e.currentTarget.value })} error={createProject.fields.name} required />
          <Field label="Plan id" name="plan_id" hint="Optional: no plan, no limits." value={project.plan_id} onInput={(e) => setProject({ ...project, plan_id: e.currentTarget.value })} error={createProject.fields.plan_id} />
          <Field label="Owner" name="owner_id" error={createProject.fields.owner_id}>
            {(control) => (
              <select {...control} value={project.owner_id} onChange={(e) => setProject({ ...project, owner_id: e.currentTarget.value })}>
                <option value="">No owner yet</option>
                {users.map((u) => <option value={u.id}>{u.email}</option>)}
              </select>
            )}
          </Field>
          <Button type="submit" variant="primary" busy={createProject.busy}>Create project</Button>
        </form>
        <FormError message={createProject.error} />
        {projects.length > 0 && (
          <Table caption="Projects created now" rows={projects} rowKey={(p) => p.id} empty={{ title: '' }} columns={[
            { label: 'Project', cell: (p) => p.name },
            { label: 'Plan', cell: (p) => p.plan_id ?? 'none' },
            { label: 'Id', cell: (p) => idCell(p.id, p.name) },
          ]} />
        )}
      </section>
    </>
  );
}
