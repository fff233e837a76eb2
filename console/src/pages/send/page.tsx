// Send a test message, plain or from a template, and watch each recipient's
// row move (queued → sent / failed) right here and in the open email log.
import { useEffect, useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { api, type ApiSchemas } from '../../api/client';
import { ok } from '../../api/errors';
import { useSubmit } from '../../api/use-submit';
import { useLiveEvents } from '../../live';
import { Button, Field, FormError, Page, Table } from '../../ui';
import { announceSent } from '../emails/local-sends';
import { StatusBadge } from '../emails/status-badge';
import '../emails/mail.css';

type Email = ApiSchemas['Email'];
type Template = ApiSchemas['Template'];

const list = (s: string) => s.split(/[,;\n]/).map((x) => x.trim()).filter(Boolean);

export default function SendPage() {
  const [mode, setMode] = useState<'plain' | 'template'>('plain');
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [subject, setSubject] = useState('');
  const [text, setText] = useState('');
  const [html, setHtml] = useState('');
  const [templates, setTemplates] = useState<Template[] | undefined>(undefined);
  const [templateId, setTemplateId] = useState('');
  const [data, setData] = useState('{}');
  const [dataError, setDataError] = useState<string | undefined>();
  const [sent, setSent] = useState<Email[] | undefined>(undefined);

  useEffect(() => {
    if (mode !== 'template' || templates) return;
    void ok(api.GET('/api/v1/templates', { params: { query: { limit: 100 } } })).then((t) => {
      setTemplates(t.templates);
      setTemplateId((id) => id || t.templates.find((x) => x.active_version_id)?.id || '');
    }, () => setTemplates([]));
  }, [mode]);

  const send = useSubmit(async () => {
    let parsed: Record<string, unknown> = {};
    setDataError(undefined);
    if (mode === 'template') {
      try { parsed = JSON.parse(data || '{}'); } catch { setDataError('not JSON: write an object such as {"name": "Ada"}'); throw new Error('the template data is not JSON'); }
    }
    const body = mode === 'plain'
      ? { from, to: list(to), subject, ...(text ? { text } : {}), ...(html ? { html } : {}) }
      : { from, to: list(to), template_id: templateId, data: parsed };
    const result = await ok(api.POST('/api/v1/emails/send', { body }));
    setSent(result.emails);
    announceSent(result.emails.map((e) => e.id));
  }, ['from', 'to', 'subject', 'text', 'html', 'template_id', 'data']);

  // Each sent row follows its events here too.
  useLiveEvents(['email.status'], (e) => {
    const d = e.data as { id?: string; status?: Email['status'] };
    if (d.id && d.status) setSent((rows) => rows?.map((r) => (r.id === d.id ? { ...r, status: d.status! } : r)));
  }, () => {});

  const fieldOf = (name: string) => send.fields[name] ?? Object.entries(send.fields).find(([k]) => k.startsWith(`${name}.`))?.[1];
  return (
    <Page title="Send" description="Send a test message from one of your verified domains, then follow it in the log.">
      <div class="tabs" role="group" aria-label="What to send">
        <Button aria-pressed={mode === 'plain'} onClick={() => setMode('plain')}>Plain message</Button>
        <Button aria-pressed={mode === 'template'} onClick={() => setMode('template')}>From a template</Button>
      </div>
      <form class="form-grid" aria-label="Send a message" onSubmit={(e) => { e.preventDefault(); void send.run(); }}>
        <Field label="From" name="from" required placeholder="Acme <news@acme.example>" value={from} onInput={(e) => setFrom(e.currentTarget.value)} error={fieldOf('from')} hint="An address of a verified domain of this project." />
        <Field label="To" name="to" required placeholder="ann@example.org, bob@example.org" value={to} onInput={(e) => setTo(e.currentTarget.value)} error={fieldOf('to')} hint="One or more addresses, separated by commas." />
        {mode === 'plain' ? <>
          <Field label="Subject" name="subject" required value={subject} onInput={(e) => setSubject(e.currentTarget.value)} error={fieldOf('subject')} />
          <Field label="Text" name="text" error={fieldOf('text')}>
            {(c) => <textarea {...c} value={text} onInput={(e) => setText(e.currentTarget.value)} />}
          </Field>
          <Field label="HTML (optional)" name="html" error={fieldOf('html')}>
            {(c) => <textarea {...c} class="mono" value={html} onInput={(e) => setHtml(e.currentTarget.value)} />}
          </Field>
        </> : <>
          <Field label="Template" name="template_id" error={fieldOf('template_id')}
            hint={templates && templates.length === 0 ? <>No template yet: make one in <Link href="/templates">Templates</Link>.</> : 'Its active version is sent.'}>
            {(c) => (
              <select {...c} value={templateId} onChange={(e) => setTemplateId(e.currentTarget.value)}>
                <option value="">Pick a template</option>
                {(templates ?? []).map((t) => <option value={t.id} disabled={!t.active_version_id}>{t.name}{t.active_version_id ? '' : ' (no active version)'}</option>)}
              </select>
            )}
          </Field>
          <Field label="Data (JSON)" name="data" error={dataError ?? fieldOf('data')} hint="The values the template's variables read.">
            {(c) => <textarea {...c} class="mono" value={data} onInput={(e) => setData(e.currentTarget.value)} />}
          </Field>
        </>}
        <FormError message={send.error} />
        <div><Button variant="primary" type="submit" busy={send.busy}>Send message</Button></div>
      </form>
      {sent && (
        <section class="section" aria-labelledby="sent-heading">
          <h2 id="sent-heading">Sent</h2>
          <Table caption="Recipients of the message just sent" rows={sent} rowKey={(e) => e.id} empty={{ title: 'No recipient' }}
            columns={[
              { label: 'Recipient', cell: (e) => <Link href={`/emails/${e.id}`}>{e.recipient}</Link> },
              { label: 'Status', cell: (e) => <StatusBadge status={e.status} /> },
            ]}
            footer={<Link href="/emails">Open the email log</Link>} />
        </section>
      )}
    </Page>
  );
}
