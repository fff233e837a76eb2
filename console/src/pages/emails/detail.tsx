// One recipient's email: where it stands, every delivery attempt with the
// receiving server's reply, its bounces, headers and the rendered message.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { api, type ApiSchemas } from '../../api/client';
import { messageOf, ok } from '../../api/errors';
import { useLiveEvents } from '../../live';
import type { PageProps } from '../../routes';
import { FormError, Page, Table } from '../../ui';
import { HtmlPreview } from '../inbound/html-preview';
import { bytes, when } from './format';
import { StatusBadge } from './status-badge';
import './mail.css';

type EmailDetail = ApiSchemas['EmailDetail'];
type Bounce = ApiSchemas['Bounce'];

export default function EmailPage({ params }: PageProps<{ id: string }>) {
  const [email, setEmail] = useState<EmailDetail | null | undefined>(undefined);
  const [bounces, setBounces] = useState<Bounce[] | undefined>(undefined);
  const [error, setError] = useState<string | undefined>();
  const load = useCallback(async () => {
    try {
      setEmail((await ok(api.GET('/api/v1/emails/{id}', { params: { path: { id: params.id } } }))).email);
      const found = await api.GET('/api/v1/bounces', { params: { query: { email_id: params.id } } });
      setBounces(found.data?.bounces ?? []);
    } catch (e) {
      setError(messageOf(e));
      setEmail(null);
    }
  }, [params.id]);
  useEffect(() => { void load(); }, [load]);
  useLiveEvents(['email.status'], (e) => { if ((e.data as { id?: string }).id === params.id) void load(); }, () => void load());

  if (email === undefined) return <p class="loading" role="status">Loading…</p>;
  if (email === null) return <Page title="Email"><FormError message={error} /><p><Link href="/emails">Back to the email log</Link></p></Page>;
  const headers = Object.entries(email.headers);
  return (
    <Page title={email.subject || '(no subject)'} description={<>To {email.recipient} · <StatusBadge status={email.status} /></>}
      actions={<Link href="/emails">All emails</Link>}>
      <dl class="facts">
        <dt>Status</dt><dd><StatusBadge status={email.status} />{email.error_message && <> {email.error_message}</>}</dd>
        <dt>From</dt><dd>{email.from}</dd>
        <dt>Recipient</dt><dd>{email.recipient} ({email.kind})</dd>
        <dt>To</dt><dd>{email.to.join(', ')}</dd>
        {email.cc.length > 0 && <><dt>Cc</dt><dd>{email.cc.join(', ')}</dd></>}
        {email.reply_to.length > 0 && <><dt>Reply-To</dt><dd>{email.reply_to.join(', ')}</dd></>}
        <dt>Created</dt><dd><time dateTime={email.created_at}>{when(email.created_at)}</time></dd>
        <dt>Sent</dt><dd>{when(email.sent_at)}</dd>
        <dt>Message-ID</dt><dd class="mono">{email.message_id_header}</dd>
        <dt>Last reply</dt><dd class="mono">{email.smtp_reply ?? '—'}</dd>
        {email.tags.length > 0 && <><dt>Tags</dt><dd>{email.tags.join(', ')}</dd></>}
        {email.template_id && <><dt>Template</dt><dd><Link href={`/templates/${email.template_id}`}>{email.template_id}</Link></dd></>}
      </dl>

      <section class="section" aria-labelledby="attempts">
        <h2 id="attempts">Delivery attempts</h2>
        <Table caption="Delivery attempts" rows={email.delivery_attempts} rowKey={(a) => String(a.attempt)}
          empty={{ title: 'No attempt yet', children: <p>A relay node picks the message up and its answer appears here.</p> }}
          columns={[
            { label: '#', cell: (a) => a.attempt, class: 'num' },
            { label: 'Outcome', cell: (a) => <StatusBadge status={a.outcome === 'deferred' ? 'pending' : a.outcome} label={a.outcome} /> },
            { label: 'Remote reply', cell: (a) => <span class="mono">{a.smtp_code ?? ''} {a.reply}</span> },
            { label: 'Server', cell: (a) => a.server ?? '—' },
            { label: 'Started', cell: (a) => when(a.started_at) },
            { label: 'Took', cell: (a) => `${a.duration_ms} ms`, class: 'num' },
          ]} />
      </section>

      <section class="section" aria-labelledby="bounces">
        <h2 id="bounces">Bounces</h2>
        <Table caption="Bounces" rows={bounces} rowKey={(b) => b.id}
          empty={{ title: 'No bounce', children: <p>Bounces and complaints reported for this email appear here.</p> }}
          columns={[
            { label: 'Type', cell: (b) => b.type },
            { label: 'Code', cell: (b) => <span class="mono">{[b.smtp_code, b.status].filter(Boolean).join(' ') || '—'}</span> },
            { label: 'Diagnostic', cell: (b) => <span class="mono">{b.diagnostic ?? '—'}</span> },
            { label: 'When', cell: (b) => when(b.created_at) },
          ]} />
      </section>

      <section class="section" aria-labelledby="preview">
        <h2 id="preview">Message</h2>
        {email.html
          ? <HtmlPreview src={`/api/v1/emails/${email.id}/preview`} title="Rendered HTML of the email" />
          : <p class="notice-inline">No HTML part.</p>}
        {email.text && <><h3>Text</h3><pre class="pre">{email.text}</pre></>}
        {email.attachments.length > 0 && (
          <ul>{email.attachments.map((a, i) => <li><a href={`/api/v1/emails/${email.id}/attachments/${i}`} download>{a.filename}</a> ({a.content_type}, {bytes(a.size)})</li>)}</ul>
        )}
      </section>

      <section class="section" aria-labelledby="headers">
        <h2 id="headers">Custom headers</h2>
        {headers.length
          ? <dl class="facts">{headers.map(([k, v]) => <><dt class="mono">{k}</dt><dd class="mono">{v}</dd></>)}</dl>
          : <p class="notice-inline">None: the send set no custom header.</p>}
      </section>
    </Page>
  );
}
