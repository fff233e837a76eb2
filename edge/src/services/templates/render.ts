// Rendering one localization of a template version with data (docs/template-rendering.md):
// mustache's parser (logic-less, no eval, so it runs on workerd), then one
// walk of the parsed tokens that both checks and renders. Pure: no database,
// no clock. HTML is escaped by default; subject and text are not (they are
// not HTML). Mustache renders a missing name as '' silently; here a name the
// data does not hold is refused, naming it: a mail that says "Hello ," is
// worse than no mail.
//
// The walk is ours, not Mustache.render, so that it can stop: a 72-byte
// template of six sections nested over a 12-item list is 12^6 renders of its
// inside (30 MB in 460 ms; 20 items would exhaust an isolate). Nesting depth
// is refused before anything renders; steps and output bytes are counted
// over the subject, HTML and text together and the render stops at the step
// or byte that crosses its bound, never after building the whole output.
import Mustache from 'mustache';
import type { Config } from '@edgemail/shared';
import { unprocessable } from '../errors.js';
import { inlineCss } from './inline-css.js';

/** What a localization holds: a subject and at least one body. */
export interface LocalizationContent {
  subject: string;
  html: string | null;
  text: string | null;
}

/** The same fields, rendered; the HTML carries the stylesheet. */
export type RenderedContent = LocalizationContent;

/** The bounds of one render (the `templates.*` settings). */
export interface RenderLimits {
  /** Deepest nesting of sections in one part. */
  maxDepth: number;
  /** Tokens visited plus list items rendered, over all parts. */
  maxSteps: number;
  /** UTF-8 bytes of the output, all parts and the stylesheet together. */
  maxBytes: number;
}

export type RenderLimitSettings = Pick<Config, 'templates.max_nesting_depth' | 'templates.max_render_steps' | 'templates.max_rendered_bytes'>;

export const renderLimits = (config: RenderLimitSettings): RenderLimits => ({
  maxDepth: config['templates.max_nesting_depth'],
  maxSteps: config['templates.max_render_steps'],
  maxBytes: config['templates.max_rendered_bytes'],
});

/** The longest subject a header line takes (RFC 5322's 998), as the send route's own limit. */
const MAX_SUBJECT = 998;
/** Parsed templates kept per isolate; bounded so that many templates cannot grow memory without end. */
const CACHE_ENTRIES = 500;

type Part = 'subject' | 'html' | 'text';
type Tokens = Mustache.TemplateSpans;
type Token = Tokens[number];

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

/**
 * Renders `content` with `data`; the stylesheet's `css`, when given, goes
 * into the HTML (see `withStylesheet`), and the HTML's `<style>` rules are
 * inlined into `style` attributes (inline-css.ts). Throws 422 naming the part and the
 * problem: a variable the data lacks, a template that does not parse, a
 * partial, a rendered subject with CR or LF (the data would add a header),
 * or a bound of `limits` crossed (naming its setting).
 * @example renderContent({ subject: 'Hi {{name}}', html: '<p>{{name}}</p>', text: null }, { name: 'A&B' }, null, limits)
 *   // { subject: 'Hi A&B', html: '<p>A&amp;B</p>', text: null }
 */
export function renderContent(content: LocalizationContent, data: Record<string, unknown>, css: string | null, limits: RenderLimits): RenderedContent {
  const budget = new Budget(limits);
  const subject = renderPart('subject', content.subject, data, budget);
  if (/[\r\n]/.test(subject)) throw unprocessable('rendered subject contains CR or LF (from the data): a subject is one header line');
  if (!subject.trim()) throw unprocessable('rendered subject is empty');
  if (subject.length > MAX_SUBJECT) throw unprocessable(`rendered subject is longer than ${MAX_SUBJECT} characters (${subject.length})`);
  const html = content.html === null ? null : renderPart('html', content.html, data, budget);
  const text = content.text === null ? null : renderPart('text', content.text, data, budget);
  if (html === null) return { subject, html, text };
  let styled = html;
  if (css) {
    budget.count(css);
    styled = withStylesheet(html, css);
  }
  return { subject, html: inlineStyles(styled, budget), text };
}

/**
 * The HTML with its `<style>` rules (the stylesheet's and the template's
 * own) also written into `style` attributes (inline-css.ts); what inlining
 * adds counts against the byte bound like the rest of the output.
 */
function inlineStyles(html: string, budget: Budget): string {
  const result = inlineCss(html);
  if (!result.inlined) return html;
  budget.count(result.html.slice(0, Math.max(0, result.html.length - html.length)));
  return result.html;
}

/**
 * 422 when a part nests sections deeper than `maxDepth` (the check a save
 * makes, before anything renders); a part that does not parse is left to
 * the render, which names that problem.
 */
export function checkNesting(part: string, template: string, maxDepth: number, field?: string): void {
  let tokens: Tokens;
  try {
    tokens = Mustache.parse(template);
  } catch {
    return;
  }
  checkDepth(part, tokens, maxDepth, field);
}

function checkDepth(part: string, tokens: Tokens, maxDepth: number, field?: string): void {
  const depth = nestingDepth(tokens, maxDepth);
  if (depth > maxDepth) {
    const problem = `nests sections more than ${maxDepth} deep (templates.max_nesting_depth)`;
    throw unprocessable(`${part} ${problem}`, field ? { [field]: problem } : undefined);
  }
}

/** The deepest nesting of sections, counted only up to `stop + 1` so a deep tree does not deepen the call stack. */
function nestingDepth(tokens: Tokens, stop: number, depth = 0): number {
  let deepest = depth;
  for (const token of tokens) {
    if (token[0] !== '#' && token[0] !== '^') continue;
    deepest = Math.max(deepest, depth + 1 > stop ? depth + 1 : nestingDepth(sectionTokens(token), stop, depth + 1));
    if (deepest > stop) return deepest;
  }
  return deepest;
}

/** What one render has spent, across its parts; throws 422 naming the bound as it is crossed. */
class Budget {
  private steps = 0;
  private bytes = 0;
  constructor(readonly limits: RenderLimits) {}

  step(): void {
    if (++this.steps > this.limits.maxSteps) {
      throw unprocessable(`template render exceeds ${this.limits.maxSteps} steps (templates.max_render_steps)`);
    }
  }

  count(s: string): void {
    this.bytes += utf8Length(s);
    if (this.bytes > this.limits.maxBytes) {
      throw unprocessable(`rendered template exceeds ${this.limits.maxBytes} bytes (templates.max_rendered_bytes)`);
    }
  }
}

/** UTF-8 length without encoding (a lone surrogate counts 3, as TextEncoder writes U+FFFD). */
function utf8Length(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) { n += 2; i++; } // a pair: 4 bytes for 2 units
    else n += 2;
  }
  return n;
}

function renderPart(part: Part, template: string, data: Record<string, unknown>, budget: Budget): string {
  let tokens: Tokens;
  try {
    tokens = Mustache.parse(template);
  } catch (e) {
    throw unprocessable(`${part} does not parse: ${e instanceof Error ? e.message : String(e)}`);
  }
  checkDepth(part, tokens, budget.limits.maxDepth);
  const out: string[] = [];
  renderTokens({ part, budget, out, escape: part === 'html' }, tokens, [data]);
  return out.join('');
}

interface Walk { part: Part; budget: Budget; out: string[]; escape: boolean }

/**
 * Renders the tokens as Mustache.render would, into `walk.out`. A variable
 * must be in the data (null is present: it renders empty). A section's name
 * may be absent (it is then false, so `{{#coupon}}…{{/coupon}}` is an optional
 * block); its contents render (and are checked) once per item, and not at all
 * when it does not render. `stack` is the context, innermost last.
 */
function renderTokens(walk: Walk, tokens: Tokens, stack: unknown[]): void {
  for (const token of tokens) {
    walk.budget.step();
    const [type, name] = token;
    if (type === 'text') {
      emit(walk, name);
    } else if (type === 'name' || type === '&') {
      const hit = lookup(stack, name);
      if (!hit.found) throw unprocessable(`missing variable: ${name} (in ${walk.part})`, { [`data.${name}`]: 'missing' });
      if (hit.value === null || hit.value === undefined) continue;
      const value = String(hit.value);
      emit(walk, type === 'name' && walk.escape && typeof hit.value !== 'number' ? Mustache.escape(value) : value);
    } else if (type === '#') {
      const { value } = lookup(stack, name);
      if (!value) continue;
      const inner = sectionTokens(token);
      if (Array.isArray(value)) {
        for (const item of value) {
          walk.budget.step();
          stack.push(item);
          renderTokens(walk, inner, stack);
          stack.pop();
        }
      } else if (typeof value === 'object' || typeof value === 'string' || typeof value === 'number') {
        stack.push(value);
        renderTokens(walk, inner, stack);
        stack.pop();
      } else {
        renderTokens(walk, inner, stack);
      }
    } else if (type === '^') {
      const { value } = lookup(stack, name);
      if (!value || (Array.isArray(value) && value.length === 0)) renderTokens(walk, sectionTokens(token), stack);
    } else if (type === '>') {
      throw unprocessable(`${walk.part} names the partial ${name}: partials are not supported`);
    }
    // '!' (a comment) and '=' (new delimiters, applied by the parser) render nothing.
  }
}

function emit(walk: Walk, s: string): void {
  walk.budget.count(s);
  walk.out.push(s);
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

const sectionTokens = (token: Token): Tokens => (Array.isArray(token[4]) ? token[4] : []);

/**
 * The stylesheet as a `<style>` element at the start of `<head>` (made when
 * the HTML has none), so that the message's own rules, later, win; the
 * render then inlines them all (`inlineStyles`). A `</style`
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
