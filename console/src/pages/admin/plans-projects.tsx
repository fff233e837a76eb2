// Plans and projects of the whole installation: every plan
// (GET /api/v1/admin/plans), the projects a page at a time, searched by name
// (GET /api/v1/admin/projects), and a form to create each.
import { useCallback, useEffect, useState } from 'preact/hooks';
import type { ApiSchemas } from '../../api/client';
import { messageOf, ok } from '../../api/errors';
import { useSubmit } from '../../api/use-submit';
import { Button, CopyButton, Field, FormError, Table, useToast } from '../../ui';
import { when } from '../account/tabs';
import { useAdmin } from './client';

type Plan = ApiSchemas['Plan'];
type Project = ApiSchemas['Project'];

const PAGE = 25;

export function PlansAndProjects() {
  const admin = useAdmin();
  const toast = useToast();
  const [plans, setPlans] = useState<Plan[] | undefined>();
  const [page, setPage] = useState<{ projects: Project[]; total: number; offset: number } | undefined>();
  const [listError, setListError] = useState<string>();
  const [search, setSearch] = useState('');
  const [users, setUsers] = useState<ApiSchemas['User'][]>([]);
  const [plan, setPlan] = useState({ name: '', hourly: '0', daily: '0' });
  const [project, setProject] = useState({ name: '', plan_id: '', owner_id: '' });

  const loadPlans = useCallback(async () => {
    try { setPlans((await ok(admin.GET('/api/v1/admin/plans'))).plans); } catch (e) { setListError(messageOf(e)); setPlans([]); }
  }, [admin]);
  const loadProjects = useCallback(async (offset: number, q = search) => {
    try {
      const r = await ok(admin.GET('/api/v1/admin/projects', { params: { query: { limit: PAGE, offset, ...(q.trim() ? { q: q.trim() } : {}) } } }));
      setPage({ projects: r.projects, total: r.total, offset: r.offset });
    } catch (e) { setListError(messageOf(e)); setPage({ projects: [], total: 0, offset: 0 }); }
  }, [admin, search]);
  useEffect(() => {
    void loadPlans();
    void loadProjects(0);
    void ok(admin.GET('/api/v1/admin/users')).then((r) => setUsers(r.users), () => {});
  }, [admin]);

  const createPlan = useSubmit(async () => {
    const made = await ok(admin.POST('/api/v1/admin/plans', { body: { name: plan.name.trim(), hourly_email_limit: Number(plan.hourly), daily_email_limit: Number(plan.daily) } }));
    setPlan({ name: '', hourly: '0', daily: '0' });
    toast(`Plan ${made.plan.name} created`);
    await loadPlans();
  }, ['name', 'hourly_email_limit', 'daily_email_limit']);
  const createProject = useSubmit(async () => {
    const made = await ok(admin.POST('/api/v1/admin/projects', { body: { name: project.name.trim(), ...(project.plan_id ? { plan_id: project.plan_id } : {}), ...(project.owner_id ? { owner_id: project.owner_id } : {}) } }));
    setProject({ name: '', plan_id: project.plan_id, owner_id: '' });
    toast(`Project ${made.project.name} created`);
    await loadProjects(0);
  }, ['name', 'plan_id', 'owner_id']);

  const planName = (id: string | null) => (id ? plans?.find((p) => p.id === id)?.name ?? id : 'none');
  const idCell = (id: string, what: string) => <span class="row-actions"><code class="wrap-anywhere">{id}</code><CopyButton value={id} what={`${what} id`} /></span>;
  const shownTo = page ? page.offset + page.projects.length : 0;
  return (
    <>
      {listError && <FormError message={listError} />}
      <section class="card" aria-labelledby="plans-title">
        <h2 id="plans-title">Plans</h2>
        <p class="card-lead">Sending limits a project is held to; 0 means no limit.</p>
        <Table caption="Plans" rows={plans} rowKey={(p) => p.id} empty={{ title: 'No plans yet', children: <p>Create one below; projects without a plan have no limits.</p> }} columns={[
          { label: 'Plan', cell: (p) => p.name },
          { label: 'Per hour', class: 'num', cell: (p) => p.hourly_email_limit || 'no limit' },
          { label: 'Per day', class: 'num', cell: (p) => p.daily_email_limit || 'no limit' },
          { label: 'Id', cell: (p) => idCell(p.id, p.name) },
        ]} />
        <form class="inline-form" onSubmit={(e) => { e.preventDefault(); void createPlan.run(); }}>
          <Field label="Plan name" name="name" value={plan.name} onInput={(e) => setPlan({ ...plan, name: e.currentTarget.value })} error={createPlan.fields.name} required />
          <Field label="Emails an hour" name="hourly_email_limit" type="number" min={0} value={plan.hourly} onInput={(e) => setPlan({ ...plan, hourly: e.currentTarget.value })} error={createPlan.fields.hourly_email_limit} />
          <Field label="Emails a day" name="daily_email_limit" type="number" min={0} value={plan.daily} onInput={(e) => setPlan({ ...plan, daily: e.currentTarget.value })} error={createPlan.fields.daily_email_limit} />
          <Button type="submit" variant="primary" busy={createPlan.busy}>Create plan</Button>
        </form>
        <FormError message={createPlan.error} />
      </section>
      <section class="card" aria-labelledby="projects-title">
        <h2 id="projects-title">Projects</h2>
        <form class="inline-form" role="search" onSubmit={(e) => { e.preventDefault(); void loadProjects(0); }}>
          <Field label="Search projects by name" name="q" type="search" value={search} onInput={(e) => setSearch(e.currentTarget.value)} />
          <Button type="submit">Search</Button>
        </form>
        <Table
          caption="Projects"
          rows={page?.projects}
          rowKey={(p) => p.id}
          empty={{ title: search.trim() ? 'No project matches' : 'No projects yet', children: <p>{search.trim() ? 'Try another part of the name.' : 'Create one below and give it an owner.'}</p> }}
          columns={[
            { label: 'Project', cell: (p) => p.name },
            { label: 'Plan', cell: (p) => planName(p.plan_id) },
            { label: 'Created', cell: (p) => when(p.created_at) },
            { label: 'Id', cell: (p) => idCell(p.id, p.name) },
          ]}
          footer={page && page.total > 0 && (
            <span class="row-actions">
              <span class="muted">{page.offset + 1}–{shownTo} of {page.total}</span>
              <Button variant="ghost" disabled={page.offset === 0} onClick={() => void loadProjects(Math.max(0, page.offset - PAGE))}>Previous</Button>
              <Button variant="ghost" disabled={shownTo >= page.total} onClick={() => void loadProjects(page.offset + PAGE)}>Next</Button>
            </span>
          )}
        />
        <h3>Create a project</h3>
        <p class="card-lead">Its owner can then sign in and invite the others.</p>
        <form class="inline-form" onSubmit={(e) => { e.preventDefault(); void createProject.run(); }}>
          <Field label="Project name" name="name" value={project.name} onInput={(e) => setProject({ ...project, name: e.currentTarget.value })} error={createProject.fields.name} required />
          <Field label="Plan" name="plan_id" error={createProject.fields.plan_id}>
            {(control) => (
              <select {...control} value={project.plan_id} onChange={(e) => setProject({ ...project, plan_id: e.currentTarget.value })}>
                <option value="">No plan (no limits)</option>
                {(plans ?? []).map((p) => <option value={p.id}>{p.name}</option>)}
              </select>
            )}
          </Field>
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
      </section>
    </>
  );
}
