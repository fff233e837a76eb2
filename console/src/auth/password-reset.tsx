// `/app/password-reset`: without a token, ask for a reset link by mail; with
// `#token=…` (the link the mail carries), choose the new password
// (docs/console.md "Password reset"). Completing it signs out every session.
import { useState } from 'preact/hooks';
import { Link, useLocation } from 'wouter-preact';
import { app } from '../api/client';
import { ok } from '../api/errors';
import { useSubmit } from '../api/use-submit';
import { useSession } from '../session';
import { Button, Field, FormError } from '../ui';
import { AuthFrame } from './auth-frame';
import { useTokenFromHash } from './token-from-hash';

export function PasswordResetPage() {
  const token = useTokenFromHash();
  return token ? <ChooseNewPassword token={token} /> : <AskForLink />;
}

function AskForLink() {
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState(false);
  const ask = useSubmit(async () => {
    await ok(app.POST('/app/api/password-reset', { body: { email: email.trim() } }));
    setSent(true);
  }, ['email']);
  return (
    <AuthFrame title="Reset your password">
      {sent ? (
        <div class="stack">
          <p role="status">If an account has this address, a link to choose a new password is on its way. It works once, for a limited time.</p>
          <p><Link href="/sign-in">Back to sign-in</Link></p>
        </div>
      ) : (
        <form class="stack" onSubmit={(e) => { e.preventDefault(); void ask.run(); }} noValidate>
          <p>We mail a link to choose a new password to the address of your account.</p>
          <Field label="Email" name="email" type="email" autoComplete="username" required value={email}
            onInput={(e) => setEmail((e.target as HTMLInputElement).value)} error={ask.fields.email} />
          <FormError message={ask.error} />
          <Button type="submit" variant="primary" busy={ask.busy}>Mail me a link</Button>
          <p class="auth-alt"><Link href="/sign-in">Back to sign-in</Link></p>
        </form>
      )}
    </AuthFrame>
  );
}

function ChooseNewPassword({ token }: { token: string }) {
  const [password, setPassword] = useState('');
  const [, navigate] = useLocation();
  const { refresh } = useSession();
  const complete = useSubmit(async () => {
    await ok(app.POST('/app/api/password-reset/complete', { body: { token, password } }));
    // Every session of the account ended, this browser's too.
    await refresh();
    navigate('/sign-in?notice=password-changed', { replace: true });
  }, ['password']);
  return (
    <AuthFrame title="Choose a new password">
      <form class="stack" onSubmit={(e) => { e.preventDefault(); void complete.run(); }} noValidate>
        <Field label="New password" name="password" type="password" autoComplete="new-password" required value={password}
          hint="At least 10 characters; length is what counts. Every session of your account is signed out."
          onInput={(e) => setPassword((e.target as HTMLInputElement).value)} error={complete.fields.password} />
        <FormError message={complete.error} />
        <Button type="submit" variant="primary" busy={complete.busy}>Set the password</Button>
      </form>
    </AuthFrame>
  );
}
