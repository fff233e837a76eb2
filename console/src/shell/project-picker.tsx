// The session's current project (PUT /app/api/session/project). Every page and
// the event stream follow it; a project requiring single sign-on that this
// session may not enter is refused by the API, and the refusal is shown.
import { useState } from 'preact/hooks';
import { messageOf } from '../api/errors';
import { useSignedIn } from '../session';
import { useToast } from '../ui';

export function ProjectPicker() {
  const { me, project, selectProject } = useSignedIn();
  const toast = useToast();
  const [busy, setBusy] = useState(false);
  if (me.memberships.length === 0) return <span class="project-none">No project</span>;
  const change = async (projectId: string) => {
    setBusy(true);
    try {
      await selectProject(projectId);
    } catch (e) {
      toast(messageOf(e), 'error');
    } finally {
      setBusy(false);
    }
  };
  return (
    <label class="project-picker">
      <span class="visually-hidden">Project</span>
      <select value={project?.project_id ?? ''} disabled={busy} onChange={(e) => void change((e.target as HTMLSelectElement).value)}>
        {!project && <option value="" disabled>Choose a project</option>}
        {me.memberships.map((m) => (
          <option key={m.project_id} value={m.project_id}>{m.project_name}{m.sso_required ? ' (single sign-on)' : ''}</option>
        ))}
      </select>
    </label>
  );
}
