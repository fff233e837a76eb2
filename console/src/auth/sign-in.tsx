// Sign-in (docs/console.md "Password sign-in and its answers"): email and
// password; when two-factor is on the API answers 401 two_factor_required and
// the same call is made again with the code (the server keeps no half-signed-in
// state, so neither do we beyond the form's fields).
import { useState } from 'preact/hooks';
import { useLocation, useSearch } from 'wouter-preact';
import { app } from '../api/client';
import { ApiError, ok } from '../api/errors';
import { useSubmit } from '../api/use-submit';
import { HOME } from '../pages/registry';
import { useSession } from '../session';
import { Button, Field, FormError } from '../ui';
import { Link } from 'wouter-preact';
import { AuthFrame } from './auth-frame';
import { safeNext } from './next-path';
import { OtherWays } from './other-ways';
import { SsoError } from './sso-error';

/** Notes other pages leave for the sign-in page (`/sign-in?notice=…`). */
const NOTICES: Record<string, string> = {
  'password-changed': 'Your password is changed and every session signed out: sign in with the new one.',
  'invitation-accepted': 'You have joined the project: sign in to open it.',
  'signed-out': 'You are signed out.',
};

export function SignInPage() {
  const { refresh } = useSession();
  const [, navigate] = useLocation();
  const search = useSearch();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [secondStep, setSecondStep] = useState<'totp' | 'recovery' | undefined>();
  const [code, setCode] = useState('');

  const next = safeNext(search, HOME);
  const signedIn = async () => {
    await refresh();
    navigate(next, { replace: true });
  };
  const notice = new URLSearchParams(search).get('notice');

  const submit = useSubmit(async () => {
    const body = {
      email, password,
      ...(secondStep === 'totp' ? { totp_code: code.trim() } : {}),
      ...(secondStep === 'recovery' ? { recovery_code: code.trim() } : {}),
    };
    try {
      await ok(app.POST('/app/api/session', { body }));
    } catch (e) {
      // The password was right and a code is due: ask for it (a missing code is not an error to show).
      if (e instanceof ApiError && e.body.two_factor_required && !secondStep) {
        setSecondStep('totp');
        return;
      }
      throw e;
    }
    await signedIn();
  }, ['email', 'password', 'totp_code', 'recovery_code']);

  return (
    <AuthFrame title={secondStep ? 'Two-factor code' : 'Sign in'}>
      {notice && NOTICES[notice] && <p class="notice" role="status">{NOTICES[notice]}</p>}
      {/* A refused single sign-on lands here (the callback's redirect): what went wrong, in our words. */}
      <SsoError />
      <form class="stack" onSubmit={(e) => { e.preventDefault(); void submit.run(); }} noValidate>
        {!secondStep ? (
          <>
            <Field label="Email" name="email" type="email" autoComplete="username" required value={email}
              onInput={(e) => setEmail((e.target as HTMLInputElement).value)} error={submit.fields.email} />
            <Field label="Password" name="password" type="password" autoComplete="current-password" required value={password}
              onInput={(e) => setPassword((e.target as HTMLInputElement).value)} error={submit.fields.password} />
          </>
        ) : secondStep === 'totp' ? (
          <Field key="totp" label="Code from your authenticator app" name="totp_code" inputMode="numeric" autoComplete="one-time-code"
            pattern="[0-9]*" maxLength={6} required autoFocus value={code}
            onInput={(e) => setCode((e.target as HTMLInputElement).value)} error={submit.fields.totp_code} />
        ) : (
          <Field key="recovery" label="Recovery code" name="recovery_code" autoComplete="off" required autoFocus value={code}
            hint="One of the ten codes you saved when you turned on two-factor; each works once."
            onInput={(e) => setCode((e.target as HTMLInputElement).value)} error={submit.fields.recovery_code} />
        )}
        <FormError message={submit.error} />
        <Button type="submit" variant="primary" busy={submit.busy}>{secondStep ? 'Verify' : 'Sign in'}</Button>
        {secondStep && (
          <p class="auth-alt">
            <button type="button" class="link-button" onClick={() => { setCode(''); submit.reset(); setSecondStep(secondStep === 'totp' ? 'recovery' : 'totp'); }}>
              {secondStep === 'totp' ? 'Use a recovery code instead' : 'Use a code from your app instead'}
            </button>
            {' · '}
            <button type="button" class="link-button" onClick={() => { setCode(''); setPassword(''); submit.reset(); setSecondStep(undefined); }}>Start over</button>
          </p>
        )}
        {!secondStep && <p class="auth-alt"><Link href="/app/password-reset">Forgot your password?</Link></p>}
      </form>
      {!secondStep && <OtherWays next={next} onSignedIn={signedIn} />}
    </AuthFrame>
  );
}
