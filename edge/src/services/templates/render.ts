// Rendering one localization of a template version with data (docs/template-rendering.md):
// mustache, logic-less and without eval, so it runs on workerd. Pure: no
// database, no clock. HTML is escaped by default; subject and text are not
// (they are not HTML). Mustache renders a missing name as '' silently, so
// before rendering the parsed tokens are walked against the data, and a name
// the data does not hold is refused, naming it: a mail that says "Hello ,"
// is worse than no mail.
import Mustache from 'mustache';
import { unprocessable } from '../errors.js';

/** What a localization holds: a subject and at least one body. */
export interface LocalizationContent {
  subject: string;
  html: string | null;
  text: string | null;
}

/** The same fields, rendered; the HTML carries the stylesheet. */
export type RenderedContent = LocalizationContent;

/** The longest subject a header line takes (RFC 5322's 998), as the send route's own limit. */
const MAX_SUBJECT = 998;
/** Parsed templates kept per isolate; bounded so that many templates cannot grow memory without end. */
const CACHE_ENTRIES = 500;

type Part = 'subject' | 'html' | 'text';
type Token = Mustache.TemplateSpans[number];

// Mustache's own cache is an unbounded object; a small LRU of the same shape instead.
const cache = new Map<string, string>();
Mustache.templateCache = {
  get: (key) => {
    const hit = cache.get(key);
    if (hit !== undefined) { cache.delete(key); cache.set(key, hit); }
    return hit;
  },
  set: (key, value) => {
    cache.set(key, value);
    if (cache.size > CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
  },
  clear: () => cache.clear(),
};

const identity = (s: string) => s;

/**
 * Renders `content` with `data`; the stylesheet's `css`, when given, goes
 * into the HTML (see `withStylesheet`). Throws 422 naming the part and the
 * problem: a variable the data lacks, a template that does not parse, a
 * partial, a rendered subject with CR or LF (the data would add a header).
 * @example renderContent({ subject: 'Hi {{name}}', html: '<p>{{name}}</p>', text: null }, { name: 'A&B' }, null)
 *   // { subject: 'Hi A&B', html: '<p>A&amp;B</p>', text: null }
 */
export function renderContent(content: LocalizationContent, data: Record<string, unknown>, css: string | null): RenderedContent {
  const subject = renderPart('subject', content.subject, data);
  if (/[\r\n]/.test(subject)) throw unprocessable('rendered subject contains CR or LF (from the data): a subject is one header line');
  if (!subject.trim()) throw unprocessable('rendered subject is empty');
  if (subject.length > MAX_SUBJECT) throw unprocessable(`rendered subject is longer than ${MAX_SUBJECT} characters (${subject.length})`);
  const html = content.html === null ? null : renderPart('html', content.html, data);
  const text = content.text === null ? null : renderPart('text', content.text, data);
  return { subject, html: html !== null && css ? withStylesheet(html, css) : html, text };
}

function renderPart(part: Part, template: string, data: Record<string, unknown>): string {
  let tokens: Mustache.TemplateSpans;
  try {
    tokens = Mustache.parse(template);
  } catch (e) {
    throw unprocessable(`${part} does not parse: ${e instanceof Error ? e.message : String(e)}`);
  }
  checkTokens(part, tokens, [data]);
  try {
    return Mustache.render(template, data, undefined, part === 'html' ? undefined : { escape: identity });
  } catch (e) {
    throw unprocessable(`${part} does not render: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/**
 * The value `name` names from the innermost context out, as mustache looks it
 * up, but only through own properties of objects and arrays: `constructor`
 * or `toString` is not data.
 */
function lookup(stack: unknown[], name: string): { found: boolean; value?: unknown } {
  if (name === '.') return { found: true, value: stack[stack.length - 1] };
  const names = name.split('.');
  for (let i = stack.length - 1; i >= 0; i--) {
    let value: unknown = stack[i];
    let found = true;
    for (const n of names) {
      if (value === null || typeof value !== 'object' || !Object.hasOwn(value, n)) { found = false; break; }
      value = (value as Record<string, unknown>)[n];
    }
    if (found) return { found, value };
  }
  return { found: false };
}

/**
 * Walks the tokens as a render would. A variable must be in the data (null
 * is present: it renders empty). A section's name may be absent (it is then
 * false, so `{{#coupon}}…{{/coupon}}` is an optional block); its contents are
 * checked for every item it would render, and not at all when it would not.
 */
function checkTokens(part: Part, tokens: Mustache.TemplateSpans, stack: unknown[]): void {
  for (const token of tokens) {
    const [type, name] = token;
    if (type === 'name' || type === '&') {
      if (!lookup(stack, name).found) throw unprocessable(`missing variable: ${name} (in ${part})`, { [`data.${name}`]: 'missing' });
    } else if (type === '#') {
      const { value } = lookup(stack, name);
      const inner = sectionTokens(token);
      if (!value) continue;
      if (Array.isArray(value)) for (const item of value) checkTokens(part, inner, [...stack, item]);
      else checkTokens(part, inner, typeof value === 'object' || typeof value === 'string' || typeof value === 'number' ? [...stack, value] : stack);
    } else if (type === '^') {
      const { value } = lookup(stack, name);
      if (!value || (Array.isArray(value) && value.length === 0)) checkTokens(part, sectionTokens(token), stack);
    } else if (type === '>') {
      throw unprocessable(`${part} names the partial ${name}: partials are not supported`);
    }
  }
}

const sectionTokens = (token: Token): Mustache.TemplateSpans => (Array.isArray(token[4]) ? token[4] : []);

/**
 * The stylesheet as a `<style>` element at the start of `<head>` (made when
 * the HTML has none), so that the message's own rules, later, win. Not
 * inlined into `style` attributes: see docs/template-rendering.md. A `</style`
 * in the CSS is written `<\/style` (the same to CSS) so it cannot end the element.
 */
export function withStylesheet(html: string, css: string): string {
  const style = `<style>${css.replace(/<\/(style)/gi, '<\\/$1')}</style>`;
  const head = /<head(\s[^>]*)?>/i.exec(html);
  if (head) return html.slice(0, head.index + head[0].length) + style + html.slice(head.index + head[0].length);
  const root = /<html(\s[^>]*)?>/i.exec(html);
  if (root) return html.slice(0, root.index + root[0].length) + `<head>${style}</head>` + html.slice(root.index + root[0].length);
  return style + html;
}
