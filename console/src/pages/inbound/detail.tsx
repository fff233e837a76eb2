// One inbound message: verdicts, parsed text and HTML (the HTML only in a
// sandboxed iframe, remote images blocked until asked), attachments,
// headers, the raw message, and a retry of its webhook delivery.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { api, type ApiSchemas } from '../../api/client';
import { messageOf, ok } from '../../api/errors';
import { useSubmit } from '../../api/use-submit';
import type { PageProps } from '../../routes';
import { Button, FormError, Page, useToast } from '../../ui';
import { bytes, when } from '../emails/format';
import { StatusBadge } from '../emails/status-badge';
import { HtmlPreview } from './html-preview';
import { AuthVerdicts } from './verdicts';
import '../emails/mail.css';

type Inbound = ApiSchemas['InboundEmail'];

export default function InboundPage({ params }: PageProps<{ id: string }>) {
  const toast = useToast();
  const [mail, setMail] = useState<Inbound | null | undefined>(undefined);
  const [error, setError] = useState<string | undefined>();
  const [view, setView] = useState<'html' | 'text'>('html');
  const load = useCallback(async () => {
    try {
      const { inbound_email } = await ok(api.GET('/api/v1/inbound-emails/{id}', { params: { path: { id: params.id } } }));
      setMail(inbound_email);
      setView(inbound_email.html_body ? 'html' : 'text');
    } catch (e) { setError(messageOf(e)); setMail(null); }
  }, [params.id]);
  useEffect(() => { void load(); }, [load]);
  const retry = useSubmit(async () => {
    const { emitted } = await ok(api.POST('/api/v1/inbound-emails/{id}/retry', { params: { path: { id: params.id } } }));
    toast(emitted ? 'Delivery to your webhooks queued again' : 'No webhook takes inbound mail: nothing was queued', emitted ? 'success' : 'info');
  });

  if (mail === undefined) return <p class="loading" role="status">Loading…</p>;
  if (mail === null) return <Page title="Inbound email"><FormError message={error} /><p><Link href="/inbound">Back to inbound mail</Link></p></Page>;
  const base = `/api/v1/inbound-emails/${mail.id}`;
  return (
    <Page title={mail.subject || '(no subject)'} description={<>From {mail.sender} · <StatusBadge status={mail.status} /></>}
      actions={<>
        {mail.has_raw && <a class="btn btn-secondary" href={`${base}/raw`} download={`${mail.id}.eml`}>Download raw message</a>}
        <Button busy={retry.busy} onClick={() => void retry.run()}>Retry webhook delivery</Button>
      </>}>
      <FormError message={retry.error} />
      <dl class="facts">
        <dt>From</dt><dd>{mail.sender}</dd>
        <dt>To</dt><dd>{mail.recipients.join(', ')}</dd>
        <dt>Received</dt><dd>{when(mail.received_at)} from <span class="mono">{mail.auth.client_ip}</span></dd>
        <dt>Authentication</dt><dd><AuthVerdicts auth={mail.auth} /></dd>
        <dt>Status</dt><dd><StatusBadge status={mail.status} />{mail.status_reason && <> {mail.status_reason}</>}</dd>
        <dt>Message-ID</dt><dd class="mono">{mail.message_id ?? '—'}</dd>
        <dt>Size</dt><dd>{bytes(mail.size)}</dd>
      </dl>
      <section class="section" aria-labelledby="content">
        <h2 id="content">Message</h2>
        <div class="tabs" role="group" aria-label="Show the message as">
          <Button aria-pressed={view === 'html'} disabled={!mail.html_body} onClick={() => setView('html')}>HTML</Button>
          <Button aria-pressed={view === 'text'} onClick={() => setView('text')}>Text</Button>
        </div>
        {view === 'html' && mail.html_body
          ? <HtmlPreview src={`${base}/preview`} title="HTML of the inbound message (sandboxed)" />
          : <pre class="pre">{mail.text_body || '(no text part)'}</pre>}
      </section>
      <section class="section" aria-labelledby="attachments">
        <h2 id="attachments">Attachments</h2>
        {mail.attachments.length
          ? <ul>{mail.attachments.map((a, i) => <li><a href={`${base}/attachments/${i}`} download={a.filename}>{a.filename || `attachment-${i}`}</a> ({a.content_type}, {bytes(a.size)})</li>)}</ul>
          : <p class="notice-inline">None.</p>}
      </section>
      <section class="section" aria-labelledby="headers">
        <h2 id="headers">Headers</h2>
        <dl class="facts">
          {Object.entries(mail.headers).flatMap(([k, v]) => (Array.isArray(v) ? v : [v]).map((one) => <><dt class="mono">{k}</dt><dd class="mono">{one}</dd></>))}
        </dl>
      </section>
    </Page>
  );
}
