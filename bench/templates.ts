// `pnpm bench templates`: what rendering templates costs (issue 18).
// 1. Renders/s of a realistic template (an order receipt: ~5 kB of HTML with
//    a loop of line items, optional sections and a stylesheet) through the
//    preview route, and through render.ts alone in this process (the engine's
//    own cost, without HTTP or the database).
// 2. The latency a template send adds over a plain send in the same run, same
//    stack, same content: the plain send carries exactly what the template
//    renders (taken from a preview first). Interleaved rounds, autocannon.
//    Goal (issue 31): a template send costs at most 10% more (p50 latency);
//    issue 18's was 20%.
import pg from 'pg';
import type { Stack } from '../edge/local/stack.js';
import { loadConfig } from '@edgemail/shared';
import { renderContent, renderLimits, withStylesheet } from '../edge/src/services/templates/render.js';
import { inlineCss } from '../edge/src/services/templates/inline-css.js';
import { numberFlags } from './args.js';
import { finishRun, startRun } from './support/results.js';
import { assertAll200, loadTarget, toRun } from './support/load.js';
import { call, mintKey, sql } from './support/api.js';
import { bootstrap, withStack } from './support/stack.js';
import type { RunResult, Target } from './support/types.js';

const DEFAULTS = { duration: 10, connections: 8, rounds: 2, warmup: 2, renders: 20000 };
const GOAL = 1.1;
const FROM_DOMAIN = 'bench-templates.test';
const SETTINGS = { SERVICE_RATELIMIT_API_PER_MINUTE: '1000000000' };

const CSS = `
body { margin: 0; padding: 0; background: #f4f5f7; font-family: -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif; color: #1f2933; }
.wrapper { width: 100%; background: #f4f5f7; padding: 24px 0; }
.card { max-width: 600px; margin: 0 auto; background: #ffffff; border-radius: 8px; padding: 32px; }
h1 { font-size: 22px; margin: 0 0 16px; } p { font-size: 15px; line-height: 1.5; margin: 0 0 12px; }
table.items { width: 100%; border-collapse: collapse; margin: 16px 0; }
table.items th { text-align: left; font-size: 12px; text-transform: uppercase; color: #7b8794; border-bottom: 1px solid #e4e7eb; padding: 8px 4px; }
table.items td { font-size: 14px; border-bottom: 1px solid #f0f2f4; padding: 10px 4px; }
td.num { text-align: right; white-space: nowrap; } .total td { font-weight: 600; border-bottom: 0; }
.coupon { background: #fff8e1; border: 1px dashed #f0b429; padding: 12px; border-radius: 6px; }
.button { display: inline-block; background: #3b82f6; color: #ffffff; text-decoration: none; padding: 12px 20px; border-radius: 6px; }
.footer { font-size: 12px; color: #9aa5b1; text-align: center; margin-top: 24px; }
`;

const HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Your order {{order.id}}</title></head>
<body><div class="wrapper"><div class="card">
  <h1>Thank you for your order, {{user.first_name}}!</h1>
  <p>We received order <strong>#{{order.id}}</strong> on {{order.date}}. We will let you know at {{user.email}} as soon as it ships.</p>
  {{#order.gift}}<p>This order is a gift for <strong>{{recipient}}</strong>; prices are left off the packing slip.</p>{{/order.gift}}
  <table class="items" role="presentation">
    <tr><th>Item</th><th>SKU</th><th class="num">Qty</th><th class="num">Price</th></tr>
    {{#order.items}}
    <tr>
      <td><a href="{{url}}">{{name}}</a>{{#variant}}<br><span style="color:#7b8794;font-size:12px">{{variant}}</span>{{/variant}}</td>
      <td>{{sku}}</td><td class="num">{{qty}}</td><td class="num">{{price}}</td>
    </tr>
    {{/order.items}}
    <tr class="total"><td colspan="3">Subtotal</td><td class="num">{{order.subtotal}}</td></tr>
    <tr class="total"><td colspan="3">Shipping ({{order.shipping.method}})</td><td class="num">{{order.shipping.price}}</td></tr>
    <tr class="total"><td colspan="3">Total</td><td class="num">{{order.total}}</td></tr>
  </table>
  {{#coupon}}<div class="coupon"><p>Your next order: <strong>{{code}}</strong> takes {{percent}}% off until {{until}}.</p></div>{{/coupon}}
  {{^coupon}}<p>Join our newsletter for members-only offers.</p>{{/coupon}}
  <p>Shipping to:<br>{{order.address.name}}<br>{{order.address.line1}}<br>{{order.address.postcode}} {{order.address.city}}<br>{{order.address.country}}</p>
  <p style="text-align:center;margin:24px 0"><a class="button" href="{{links.order}}">View your order</a></p>
  <p>Questions? Reply to this email or visit <a href="{{links.help}}">our help centre</a>. Returns are free within 30 days: start one from your order page.</p>
  <div class="footer"><p>{{company.name}} · {{company.address}}</p><p><a href="{{links.unsubscribe}}">Unsubscribe</a> · <a href="{{links.preferences}}">Email preferences</a></p></div>
</div></div></body></html>`;

const TEXT = `Thank you for your order, {{user.first_name}}!

Order #{{order.id}} of {{order.date}}:
{{#order.items}}
- {{name}}{{#variant}} ({{variant}}){{/variant}}, {{sku}}: {{qty}} × {{price}}
{{/order.items}}
Subtotal {{order.subtotal}}; shipping ({{order.shipping.method}}) {{order.shipping.price}}; total {{order.total}}.
{{#coupon}}Your next order: {{code}} takes {{percent}}% off until {{until}}.{{/coupon}}
View your order: {{links.order}}
{{company.name}} · {{company.address}} · unsubscribe: {{links.unsubscribe}}`;

const SUBJECT = 'Your order #{{order.id}} is confirmed, {{user.first_name}}';

const DATA = {
  user: { first_name: 'Ada', email: 'ada@example.org' },
  recipient: 'Charles',
  order: {
    id: 'A-104273', date: '26 November 2026', gift: false, subtotal: '€ 214.40', total: '€ 219.30',
    shipping: { method: 'Standard', price: '€ 4.90' },
    address: { name: 'Ada Lovelace', line1: '12 St James\'s Square', postcode: 'SW1Y 4JH', city: 'London', country: 'United Kingdom' },
    items: Array.from({ length: 8 }, (_, i) => ({
      name: `Notebook, dotted, A5 (${i + 1})`, sku: `NB-A5-${1000 + i}`, qty: 1 + (i % 3), price: `€ ${(12.5 + i * 3.1).toFixed(2)}`,
      url: `https://shop.example.org/p/nb-a5-${1000 + i}?utm_source=receipt&utm_medium=email`, variant: i % 2 ? 'Colour: slate' : null,
    })),
  },
  coupon: { code: 'THANKS15', percent: 15, until: '31 December 2026' },
  links: {
    order: 'https://shop.example.org/orders/A-104273', help: 'https://shop.example.org/help',
    unsubscribe: 'https://shop.example.org/u/0b9b7c1e', preferences: 'https://shop.example.org/prefs/0b9b7c1e',
  },
  company: { name: 'Example Shop Ltd', address: '1 Market Street, London EC1A 1AA' },
};

interface Figures { name: string; requestsPerSecond: number; p50Ms: number; p99Ms: number; runs: RunResult[] }

export async function runTemplatesBench(argv: string[]): Promise<void> {
  const flags = numberFlags(argv, DEFAULTS);
  const clock = startRun();
  console.error(`bench templates: ${flags.rounds} rounds × ${flags.duration}s, ${flags.connections} connections per target`);

  const engine = engineFigures(flags.renders);
  const { figures, htmlBytes } = await withStack(SETTINGS, async (stack) => {
    const tenant = await bootstrap(stack);
    const key = await mintKey(stack, tenant.platformToken, tenant.projectId, ['emails:write', 'domains:write', 'templates:read'], 'bench-templates');
    await call(stack, 'POST', '/api/v1/domains', key, { name: FROM_DOMAIN });
    const { templateId, versionId } = await sql(stack, (c) => seedTemplate(c, tenant.projectId));
    // The plain send carries exactly what the template renders.
    const rendered = await call(stack, 'POST', `/api/v1/templates/${templateId}/versions/${versionId}/preview`, key, { data: DATA }) as { subject: string; html: string; text: string };
    return { figures: await measure(stack, key, templateId, versionId, rendered, flags), htmlBytes: Buffer.byteLength(rendered.html) };
  });

  const [plain, templated, preview] = figures as [Figures, Figures, Figures];
  console.log('');
  console.log(`template: ${Buffer.byteLength(HTML)} bytes of HTML source (rendered ${htmlBytes} with the stylesheet, inlined), ${DATA.order.items.length} line items, sections, a stylesheet`);
  console.log(`render.ts alone (this process, no HTTP, no database): ${engine.rendersPerSecond.toFixed(0)} renders/s, of which inlining the CSS into style attributes ${engine.inlineMs.toFixed(2)} ms per message`);
  console.log('');
  console.log('| target | req/s | p50 ms | p99 ms | req/s per round |');
  console.log('|---|---|---|---|---|');
  for (const t of figures) console.log(`| ${t.name} | ${t.requestsPerSecond.toFixed(0)} | ${t.p50Ms.toFixed(1)} | ${t.p99Ms.toFixed(1)} | ${t.runs.map((r) => r.requestsPerSecond.toFixed(0)).join(', ')} |`);
  const latencyRatio = templated.p50Ms / plain.p50Ms;
  const throughputRatio = plain.requestsPerSecond / templated.requestsPerSecond;
  console.log(`preview: ${preview.requestsPerSecond.toFixed(0)} renders/s through the route`);
  console.log(`template send p50 ${templated.p50Ms.toFixed(1)} ms vs plain send ${plain.p50Ms.toFixed(1)} ms: +${(templated.p50Ms - plain.p50Ms).toFixed(1)} ms, ratio ${latencyRatio.toFixed(2)}` +
    ` (throughput: plain / template ${throughputRatio.toFixed(2)}); goal <= ${GOAL.toFixed(2)}: ${latencyRatio <= GOAL ? 'PASS' : 'BELOW'}`);
  finishRun('templates', clock, { options: flags, engineRendersPerSecond: engine.rendersPerSecond, engineInlineMs: engine.inlineMs, figures, latencyRatio, throughputRatio, goal: GOAL });
}

/**
 * render.ts alone in this process: renders/s (Mustache, the stylesheet and its inlining into style
 * attributes), and the inlining alone (inline-css.ts on the rendered HTML), in ms per message. At most
 * `renders` of each, and no more than about 3 s each: an inlining render costs milliseconds.
 */
function engineFigures(renders: number): { rendersPerSecond: number; inlineMs: number } {
  const content = { subject: SUBJECT, html: HTML, text: TEXT };
  // The default bounds, as the Worker renders with them.
  const limits = renderLimits(loadConfig({}).config);
  const rate = (fn: () => void) => {
    for (let i = 0; i < 200; i++) fn();
    const started = performance.now();
    let n = 0;
    while (n < renders && performance.now() - started < 3000) { fn(); n++; }
    return n / ((performance.now() - started) / 1000);
  };
  const rendersPerSecond = rate(() => renderContent(content, DATA, CSS, limits));
  // The rendered HTML with the stylesheet, not yet inlined (the template has no <style> of its own, so a render without the CSS inlines nothing).
  const html = withStylesheet(renderContent(content, DATA, null, limits).html!, CSS);
  return { rendersPerSecond, inlineMs: 1000 / rate(() => inlineCss(html)) };
}

async function measure(stack: Stack, key: string, templateId: string, versionId: string, rendered: { subject: string; html: string; text: string }, flags: typeof DEFAULTS): Promise<Figures[]> {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const from = `Bench <news@${FROM_DOMAIN}>`;
  const to = ['ann@sink.test'];
  const targets: Target[] = [
    { name: 'plain send', path: '/api/v1/emails/send', method: 'POST', requireAll200: true, headers, body: JSON.stringify({ from, to, subject: rendered.subject, html: rendered.html, text: rendered.text }) },
    { name: 'template send', path: '/api/v1/emails/send', method: 'POST', requireAll200: true, headers, body: JSON.stringify({ from, to, template_id: templateId, data: DATA }) },
    { name: 'preview', path: `/api/v1/templates/${templateId}/versions/${versionId}/preview`, method: 'POST', headers, body: JSON.stringify({ data: DATA }) },
  ];
  for (const t of targets) {
    console.error(`  warm-up ${t.name} (${flags.warmup}s)`);
    await loadTarget(stack, t, flags.warmup, flags.connections);
  }
  const runs = new Map<Target, RunResult[]>(targets.map((t) => [t, []]));
  for (let round = 1; round <= flags.rounds; round++) {
    for (const t of targets) {
      const run = toRun(round, await loadTarget(stack, t, flags.duration, flags.connections));
      console.error(`  round ${round} ${t.name}: ${run.requestsPerSecond.toFixed(0)} req/s, p50 ${run.p50Ms} ms, p99 ${run.p99Ms} ms`);
      // Preview answers 200, the sends 201 (assertAll200 expects 201 of a POST).
      if (t.name === 'preview') {
        if (run.non2xx || run.errors) throw new Error(`preview run ${round}: ${run.non2xx} non-2xx, ${run.errors} errors (${JSON.stringify(run.statusCodes)})`);
      } else {
        await assertAll200(stack, t, run);
      }
      runs.get(t)!.push(run);
    }
    // The sends queue messages; keep the table from growing across rounds.
    await sql(stack, (c) => c.query('DELETE FROM outbound_messages'));
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  return targets.map((t) => {
    const r = runs.get(t)!;
    return { name: t.name, requestsPerSecond: mean(r.map((x) => x.requestsPerSecond)), p50Ms: mean(r.map((x) => x.p50Ms)), p99Ms: mean(r.map((x) => x.p99Ms)), runs: r };
  });
}

/** The template as the CRUD routes would store it, written directly (and the domain taken as verified). */
async function seedTemplate(c: pg.Client, projectId: string): Promise<{ templateId: string; versionId: string }> {
  await c.query('UPDATE domains SET verified_at = now(), ownership_proven_at = now(), last_checked_at = now() WHERE name = $1', [FROM_DOMAIN]);
  const sheet = (await c.query('INSERT INTO stylesheets (project_id, name, css) VALUES ($1, $2, $3) RETURNING id', [projectId, 'receipt', CSS])).rows[0].id as string;
  const templateId = (await c.query("INSERT INTO templates (project_id, name, highest_version) VALUES ($1, 'receipt', 1) RETURNING id", [projectId])).rows[0].id as string;
  const versionId = (await c.query('INSERT INTO template_versions (template_id, project_id, version, stylesheet_id, first_activated_at) VALUES ($1, $2, 1, $3, now()) RETURNING id',
    [templateId, projectId, sheet])).rows[0].id as string;
  await c.query("INSERT INTO template_localizations (version_id, language, subject, html, text) VALUES ($1, 'en', $2, $3, $4)", [versionId, SUBJECT, HTML, TEXT]);
  await c.query('UPDATE templates SET active_version_id = $2 WHERE id = $1', [templateId, versionId]);
  return { templateId, versionId };
}

