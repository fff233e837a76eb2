// `/app/invitation#token=…`, the link an invitation mail carries
// (docs/console.md "Invitations"): join the project. A person without an
// account chooses a password (and a name); one with an account leaves the
// password empty (the API refuses one then, naming the field).
import { useState } from 'preact/hooks';
import { Link, useLocation } from 'wouter-preact';
import { app } from '../api/client';
import { ok } from '../api/errors';
import { useSubmit } from '../api/use-submit';
import { useSession } from '../session';
import { Button, Field, FormError } from '../ui';
import { AuthFrame } from './auth-frame';
import { useTokenFromHash } from './token-from-hash';

export function InvitationPage() {
  const token = useTokenFromHash();
  const { me } = useSession();
  const [, navigate] = useLocation();
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const accept = useSubmit(async () => {
    await ok(app.POST('/app/api/invitations/accept', { body: { token: token!, ...(name.trim() ? { name: name.trim() } : {}), ...(password ? { password } : {}) } }));
    navigate(me ? '/' : '/sign-in?notice=invitation-accepted', { replace: true });
  }, ['name', 'password']);

  if (!token) {
    return (
      <AuthFrame title="Invitation">
        <p>This link has no invitation in it. Open the link from the invitation mail again, whole; or ask the person who invited you for a new one.</p>
        <p><Link href="/sign-in">Sign in</Link></p>
      </AuthFrame>
    );
  }
  return (
    <AuthFrame title="Join the project">
      <form class="stack" onSubmit={(e) => { e.preventDefault(); void accept.run(); }} noValidate>
        <p>You were invited to a project. New here? Choose your name and a password. Already have an account? Leave both empty and accept.</p>
        <Field label="Your name" name="name" autoComplete="name" value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} error={accept.fields.name} />
        <Field label="Password" name="password" type="password" autoComplete="new-password" value={password}
          hint="At least 10 characters; length is what counts."
          onInput={(e) => setPassword((e.target as HTMLInputElement).value)} error={accept.fields.password} />
        <FormError message={accept.error} />
        <Button type="submit" variant="primary" busy={accept.busy}>Accept the invitation</Button>
      </form>
    </AuthFrame>
  );
}
