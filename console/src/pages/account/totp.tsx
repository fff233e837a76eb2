// Two-factor (TOTP): start (recent sign-in), scan the QR drawn here or type
// the secret, confirm with a code, then the recovery codes shown once. Turning
// it off asks for the password or a current code. The secret and the codes
// live only in this component's state and are dropped when done.
import { useState } from 'preact/hooks';
import { app, type AppSchemas } from '../../api/client';
import { ok } from '../../api/errors';
import { useSubmit } from '../../api/use-submit';
import { useSignedIn } from '../../session';
import { Button, CopyButton, Field, FormError, useToast } from '../../ui';
import { QrCode } from './qr-code';

export function TwoFactor() {
  const { me, refresh } = useSignedIn();
  const toast = useToast();
  const [started, setStarted] = useState<AppSchemas['TotpStarted'] | undefined>();
  const [codes, setCodes] = useState<string[] | undefined>();
  const [code, setCode] = useState('');
  const [turningOff, setTurningOff] = useState(false);
  const [proof, setProof] = useState({ password: '', code: '' });

  const start = useSubmit(async () => { setStarted(await ok(app.POST('/app/api/account/totp'))); });
  const confirm = useSubmit(async () => {
    const { recovery_codes } = await ok(app.POST('/app/api/account/totp/confirm', { body: { code: code.trim() } }));
    setStarted(undefined);
    setCode('');
    setCodes(recovery_codes);
    await refresh();
  }, ['code']);
  const disable = useSubmit(async () => {
    const body = proof.code.trim() ? { code: proof.code.trim() } : { password: proof.password };
    await ok(app.DELETE('/app/api/account/totp', { body }));
    setProof({ password: '', code: '' });
    setTurningOff(false);
    await refresh();
    toast('Two-factor authentication is off');
  }, ['password', 'code']);

  return (
    <section class="card" aria-labelledby="totp-title">
      <h2 id="totp-title">Two-factor authentication</h2>
      <p class="card-lead">
        {me.user.two_factor_enabled ? <><span class="badge badge-ok">On</span> A password sign-in also asks for a code from your authenticator app.</> : <><span class="badge">Off</span> Add a code from an authenticator app to every password sign-in.</>}
      </p>

      {codes && (
        <div class="shown-once" role="group" aria-label="Recovery codes">
          <p class="shown-once-warning"><strong>Save these recovery codes now:</strong> each signs you in once without your app, and they are shown only this once.</p>
          <ol class="recovery-codes">{codes.map((c) => <li key={c}><code>{c}</code></li>)}</ol>
          <div class="row-actions">
            <CopyButton value={codes.join('\n')} label="Copy all" what="recovery codes" />
            <Button variant="primary" onClick={() => setCodes(undefined)}>I have saved them</Button>
          </div>
        </div>
      )}

      {!me.user.two_factor_enabled && !started && !codes && (
        <>
          <FormError message={start.error} />
          <Button variant="primary" busy={start.busy} onClick={() => void start.run()}>Turn on two-factor</Button>
        </>
      )}

      {started && (
        <form class="stack" onSubmit={(e) => { e.preventDefault(); void confirm.run(); }}>
          <p>Scan this code with your authenticator app, or type the secret into it, then enter the 6-digit code it shows.</p>
          <QrCode text={started.otpauth_uri} label="QR code for your authenticator app" />
          <p>Secret: <code class="wrap-anywhere">{started.secret}</code> <CopyButton value={started.secret} what="secret" /></p>
          <Field label="Code from your app" name="code" inputMode="numeric" autoComplete="one-time-code" value={code} onInput={(e) => setCode(e.currentTarget.value)} error={confirm.fields.code} required />
          <FormError message={confirm.error} />
          <div class="row-actions">
            <Button type="submit" variant="primary" busy={confirm.busy}>Confirm and turn on</Button>
            <Button variant="ghost" onClick={() => { setStarted(undefined); confirm.reset(); }}>Cancel</Button>
          </div>
        </form>
      )}

      {me.user.two_factor_enabled && !codes && !turningOff && <Button variant="danger" onClick={() => setTurningOff(true)}>Turn off two-factor</Button>}
      {me.user.two_factor_enabled && turningOff && (
        <form class="stack" onSubmit={(e) => { e.preventDefault(); void disable.run(); }}>
          <p>Prove it is you: your password, or a current code from your app.</p>
          <Field label="Password" name="password" type="password" autoComplete="current-password" value={proof.password} onInput={(e) => setProof({ ...proof, password: e.currentTarget.value })} error={disable.fields.password} />
          <Field label="Or a current code" name="code" inputMode="numeric" autoComplete="one-time-code" value={proof.code} onInput={(e) => setProof({ ...proof, code: e.currentTarget.value })} error={disable.fields.code} />
          <FormError message={disable.error} />
          <div class="row-actions">
            <Button type="submit" variant="danger" busy={disable.busy}>Turn off</Button>
            <Button variant="ghost" onClick={() => { setTurningOff(false); disable.reset(); }}>Cancel</Button>
          </div>
        </form>
      )}
    </section>
  );
}
