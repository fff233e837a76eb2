// Inlining a rendered message's CSS into `style` attributes, for the mail
// clients that drop `<style>` (docs/template-rendering.md#stylesheets). juice
// (11.1.x: Node >= 18.17; its client entry, which leaves out the file and
// URL fetching of its Node entry) parses the HTML with htmlparser2 through
// cheerio's browser build (no undici, no Node modules: it runs on workerd
// without nodejs_compat), matches each rule with css-select and writes the
// cascade: specificity, then order; `!important` over a plain declaration;
// an element's own `style` over any rule but an `!important` one. Rules it
// cannot inline (`@media`, `@font-face`, `:hover` and the other
// interaction states, selectors css-select does not know) are not inlined;
// the `<style>` elements are kept whole for the clients that apply them.
//
// It runs on the rendered HTML, not on the template, so that the rules match
// what the recipient gets: the classes and elements the data wrote, the rows
// a list section repeated (`tr:nth-child(even)` stripes them as rendered).
/// <reference path="./juice-client.d.ts" />
import juice from 'juice/client';
import juiceUtils from 'juice/lib/utils';

/**
 * The largest `(elements + 200) × CSS characters` a message is inlined at.
 * Matching costs about selectors × elements (≈ 0.5–0.8 µs each) plus a fixed
 * cost per rule (≈ 0.1–0.4 ms: its selector is parsed and compiled),
 * measured in Node on a loaded 2-core machine; each element's `style` grows
 * by at most the CSS's declarations. So this bounds both the time (a few
 * hundred ms at the bound, whatever its shape: 25 000 characters of CSS
 * over no elements, 5 000 over 800) and the output. A receipt of 100
 * elements and 1.5 kB of CSS is 450 000. Above it the message is sent with
 * its `<style>` only.
 */
export const MAX_INLINE_WORK = 5_000_000;
/** A rule's fixed cost, in elements' worth of matching. */
const PER_RULE = 200;

// juice protects `{{…}}` and `<%…%>` as template code by default; the HTML here
// is already rendered, so such text is content (the data wrote it) and is
// left to the parser like any other text.
delete juice.codeBlocks.HBS;
delete juice.codeBlocks.EJS;

// What depends only on the CSS is kept per isolate, as the parse of a template
// is (render.ts): the parsed rules of a `<style>` text and the parsed
// selectors. Both are pure functions of their text (juice reads them and
// never changes them), and the CSS of an active version never changes
// (templates.md), so a send does not parse its stylesheet again: about a
// third of the inlining's CPU (3.2 → 2.1 ms for the bench's receipt). The
// HTML side, parsing the rendered message, matching and writing it, depends
// on the data and is done per message.
const PARSED_CSS_CHARS = 2_000_000;
const PARSED_SELECTORS = 20_000;
const parsedCss = new Map<string, unknown>();
let parsedCssChars = 0;
const parseCss = juiceUtils.parseCSS;
juiceUtils.parseCSS = (css: string) => {
  const hit = parsedCss.get(css);
  if (hit !== undefined) return hit;
  const rules = parseCss(css);
  if (css.length <= PARSED_CSS_CHARS) {
    parsedCss.set(css, rules);
    parsedCssChars += css.length;
    while (parsedCssChars > PARSED_CSS_CHARS) {
      const oldest = parsedCss.keys().next().value!;
      parsedCssChars -= oldest.length;
      parsedCss.delete(oldest);
    }
  }
  return rules;
};
const parsedSelectors = new Map<string, unknown>();
const parseSelector = juiceUtils.Selector.prototype.parsed;
juiceUtils.Selector.prototype.parsed = function parsed(this: { text: string; tokens?: unknown }) {
  if (this.tokens) return this.tokens;
  let tokens = parsedSelectors.get(this.text);
  if (tokens === undefined) {
    tokens = parseSelector.call(this);
    parsedSelectors.set(this.text, tokens);
    if (parsedSelectors.size > PARSED_SELECTORS) parsedSelectors.delete(parsedSelectors.keys().next().value!);
  }
  this.tokens = tokens;
  return tokens;
};

const OPTIONS: juice.Options = {
  // The `<style>` elements stay for the clients that keep them (media
  // queries, :hover, and the same rules again, which change nothing there).
  removeStyleTags: false,
  // juice's defaults, named: width/height attributes on table, td, th and img
  // and bgcolor/align/valign on table elements, which Outlook's Word engine reads.
  applyWidthAttributes: true,
  applyHeightAttributes: true,
  applyAttributesTableElements: true,
  // An inlined `!important` is written plain: inline already beats every
  // stylesheet rule but an `!important` one, which the kept `<style>` holds.
  preserveImportant: false,
};

export interface Inlined {
  html: string;
  /** False when the HTML has no `<style>` or the work bound was crossed (the HTML is then unchanged). */
  inlined: boolean;
}

/**
 * The HTML with the rules of its `<style>` elements (those without
 * `data-embed`) written into the matching elements' `style` attributes.
 * @example inlineCss('<html><head><style>p { color: red }</style></head><body><p>Hi</p></body></html>').html
 *   // '<html><head><style>p { color: red }</style></head><body><p style="color: red;">Hi</p></body></html>'
 */
export function inlineCss(html: string): Inlined {
  if (!/<style[\s>]/i.test(html)) return { html, inlined: false };
  if (inlineWork(html) > MAX_INLINE_WORK) return { html, inlined: false };
  return { html: juice(html, OPTIONS), inlined: true };
}

/** (Elements (start tags) + 200) × characters inside `<style>` elements: a cheap upper estimate, made before parsing. */
export function inlineWork(html: string): number {
  let cssChars = 0;
  for (const m of html.matchAll(/<style[\s>][\s\S]*?(<\/style|$)/gi)) cssChars += m[0].length;
  let elements = 0;
  for (let i = html.indexOf('<'); i !== -1; i = html.indexOf('<', i + 1)) {
    const c = html.charCodeAt(i + 1) | 0x20;
    if (c >= 0x61 && c <= 0x7a) elements++;
  }
  return (elements + PER_RULE) * cssChars;
}
