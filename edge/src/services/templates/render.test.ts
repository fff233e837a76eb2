import { describe, expect, test } from 'vitest';
import { ServiceError } from '../errors.js';
import Mustache from 'mustache';
import { loadConfig } from '@edgemail/shared';
import { checkNesting, renderContent as render, renderLimits, withStylesheet, type LocalizationContent, type RenderLimits } from './render.js';
import { pickLanguage } from './pick-language.js';

/** The ServiceError `fn` throws (fails when it throws none). */
function refusal(fn: () => unknown): ServiceError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ServiceError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}

/** The settings' defaults. */
const LIMITS = renderLimits(loadConfig({}).config);
const renderContent = (content: LocalizationContent, data: Record<string, unknown>, css: string | null, limits: RenderLimits = LIMITS) =>
  render(content, data, css, limits);

describe('renderContent', () => {
  test('escapes HTML in html only; subject and text are taken as they are', () => {
    const out = renderContent({ subject: 'Hi {{name}}', html: '<p>{{name}}</p>', text: 'Hi {{name}}' }, { name: '<b>A&B</b>' }, null);
    expect(out).toEqual({ subject: 'Hi <b>A&B</b>', html: '<p>&lt;b&gt;A&amp;B&lt;&#x2F;b&gt;</p>', text: 'Hi <b>A&B</b>' });
  });

  test('triple braces leave HTML unescaped when the template asks', () => {
    expect(renderContent({ subject: 's', html: '{{{raw}}}', text: null }, { raw: '<i>x</i>' }, null).html).toBe('<i>x</i>');
  });

  test('loops, nested names and optional sections', () => {
    const html = '{{#items}}<li>{{name}} × {{qty}} ({{user.name}})</li>{{/items}}{{#coupon}}<p>{{code}}</p>{{/coupon}}{{^items}}none{{/items}}';
    const data = { user: { name: 'Ann' }, items: [{ name: 'pen', qty: 2 }, { name: 'ink', qty: 1 }] };
    expect(renderContent({ subject: 'Order', html, text: null }, data, null).html).toBe('<li>pen × 2 (Ann)</li><li>ink × 1 (Ann)</li>');
  });

  test('a missing variable is 422 naming it, also inside a loop item and in the subject', () => {
    const e = refusal(() => renderContent({ subject: 'Hi', html: '<p>{{user.name}}</p>', text: null }, { user: {} }, null));
    expect([e.kind, e.message]).toEqual(['unprocessable', 'missing variable: user.name (in html)']);
    expect(refusal(() => renderContent({ subject: 'x', html: '{{#items}}{{price}}{{/items}}', text: null }, { items: [{ price: 1 }, {}] }, null)).message)
      .toBe('missing variable: price (in html)');
    expect(refusal(() => renderContent({ subject: 'Hi {{first}}', html: null, text: 'x' }, {}, null)).message).toBe('missing variable: first (in subject)');
  });

  test('null is present (renders empty); prototype names are not data', () => {
    expect(renderContent({ subject: 's', html: null, text: '[{{v}}]' }, { v: null }, null).text).toBe('[]');
    expect(refusal(() => renderContent({ subject: 's', html: null, text: '{{constructor}}' }, {}, null)).message).toBe('missing variable: constructor (in text)');
  });

  test('a section not rendered is not checked', () => {
    expect(renderContent({ subject: 's', html: null, text: '{{#vip}}{{perk}}{{/vip}}ok' }, { vip: false }, null).text).toBe('ok');
  });

  test('a template that does not parse, a partial, a subject the data breaks: 422 naming the problem', () => {
    expect(refusal(() => renderContent({ subject: 's', html: '{{#a}}x', text: null }, { a: 1 }, null)).message).toMatch(/^html does not parse: Unclosed section "a"/);
    expect(refusal(() => renderContent({ subject: 's', html: null, text: '{{> footer}}' }, {}, null)).message).toBe('text names the partial footer: partials are not supported');
    expect(refusal(() => renderContent({ subject: 'Hi {{n}}', html: null, text: 'x' }, { n: 'a\r\nBcc: x@y' }, null)).message).toMatch(/CR or LF/);
    expect(refusal(() => renderContent({ subject: '{{n}}', html: null, text: 'x' }, { n: ' ' }, null)).message).toBe('rendered subject is empty');
  });

  test('the stylesheet goes first into <head>, and cannot close its element', () => {
    expect(renderContent({ subject: 's', html: '<html><head><title>t</title></head><body>b</body></html>', text: null }, {}, 'p{color:red}').html)
      .toBe('<html><head><style>p{color:red}</style><title>t</title></head><body>b</body></html>');
    expect(withStylesheet('<html lang="en"><body>b</body></html>', 'a{}')).toBe('<html lang="en"><head><style>a{}</style></head><body>b</body></html>');
    expect(withStylesheet('<p>b</p>', 'x{}</style><script>')).toBe('<style>x{}<\\/style><script></style><p>b</p>');
  });
});

describe('the bounds of a render', () => {
  // Issue 25: 72 bytes, six sections nested over one list: n^6 renders of the inside.
  const attack = '{{#a}}'.repeat(6) + '{{/a}}'.repeat(6);
  const items = (n: number) => Array.from({ length: n }, (_, i) => `item-${String(i).padStart(5, '0')}`);

  test('the attack template: before (Mustache.render, unbounded) and after (refused at the step bound)', () => {
    expect(attack.length).toBe(72);
    let started = performance.now();
    Mustache.render(attack, { a: items(12) }); // what render.ts called before: 12^6 ≈ 3M passes over the inside
    const before = performance.now() - started;
    for (const n of [12, 20]) {
      started = performance.now();
      const e = refusal(() => renderContent({ subject: 's', html: attack, text: null }, { a: items(n) }, null));
      const after = performance.now() - started;
      expect([e.kind, e.message]).toEqual(['unprocessable', `template render exceeds ${LIMITS.maxSteps} steps (templates.max_render_steps)`]);
      console.info(`attack over ${n} items: Mustache.render ${n === 12 ? `${before.toFixed(0)} ms` : '(not tried: 64M passes)'}, bounded render refused in ${after.toFixed(1)} ms`);
      expect(after).toBeLessThan(before);
    }
  });

  test('output bytes stop the render as they cross the bound, counted over subject, html, text and the stylesheet', () => {
    // 3 GB the old render would build: refused once the bound is crossed, after about a thousand items.
    const big = '{{#a}}'.repeat(6) + '{{.}}' + '{{/a}}'.repeat(6);
    const e = refusal(() => renderContent({ subject: 's', html: null, text: big }, { a: Array(12).fill('x'.repeat(1000)) }, null));
    expect(e.message).toBe(`rendered template exceeds ${LIMITS.maxBytes} bytes (templates.max_rendered_bytes)`);
    const small = { ...LIMITS, maxBytes: 10 };
    expect(renderContent({ subject: 'é', html: '1234', text: '123' }, {}, null, small).text).toBe('123'); // 2 + 4 + 3 bytes
    expect(refusal(() => renderContent({ subject: 'é', html: '1234', text: '1234€' }, {}, null, small)).message)
      .toBe('rendered template exceeds 10 bytes (templates.max_rendered_bytes)');
    expect(refusal(() => renderContent({ subject: 's', html: '<p>x</p>', text: null }, {}, 'p{color:red}', small)).message).toMatch(/exceeds 10 bytes/);
    // A value from the data counts as it is written (escaped in HTML).
    expect(refusal(() => renderContent({ subject: 's', html: '{{v}}', text: null }, { v: '<<<' }, null, small)).message).toMatch(/exceeds 10 bytes/);
  });

  test('steps are counted over the parts together', () => {
    const tight = { ...LIMITS, maxSteps: 5 };
    expect(renderContent({ subject: 'a{{b}}', html: 'c', text: 'd' }, { b: 1 }, null, tight).subject).toBe('a1'); // 2 + 1 + 1 tokens
    expect(refusal(() => renderContent({ subject: 'a{{b}}', html: '{{#l}}x{{/l}}', text: null }, { b: 1, l: [1, 2] }, null, tight)).message)
      .toBe('template render exceeds 5 steps (templates.max_render_steps)');
  });

  test('nesting deeper than the bound is refused before anything renders, and at save (checkNesting)', () => {
    const deep = '{{#a}}'.repeat(9) + 'x' + '{{/a}}'.repeat(9);
    expect(refusal(() => renderContent({ subject: 's', html: deep, text: null }, { a: false }, null)).message)
      .toBe(`html nests sections more than ${LIMITS.maxDepth} deep (templates.max_nesting_depth)`);
    const e = refusal(() => checkNesting('localizations.0.text', '{{^a}}{{#b}}{{#c}}x{{/c}}{{/b}}{{/a}}', 2, 'localizations.0.text'));
    expect([e.kind, e.message, e.fields]).toEqual(['unprocessable', 'localizations.0.text nests sections more than 2 deep (templates.max_nesting_depth)',
      { 'localizations.0.text': 'nests sections more than 2 deep (templates.max_nesting_depth)' }]);
    expect(() => checkNesting('html', '{{#a}}{{/a}}{{#b}}{{#c}}{{/c}}{{/b}}', 2)).not.toThrow();
    expect(() => checkNesting('html', '{{#a}}', 2)).not.toThrow(); // does not parse: the render names that
    // Thousands deep does not deepen the call stack: the count stops past the bound.
    expect(() => checkNesting('html', '{{#a}}'.repeat(20_000) + '{{/a}}'.repeat(20_000), 8)).toThrow(/more than 8 deep/);
  });

  test('the render matches Mustache.render on a well-behaved template', () => {
    const html = '{{! note }}<ul>{{#items}}\n  <li>{{name}} {{{raw}}} {{& raw}} {{n}} {{flag}} {{.}}</li>\n{{/items}}</ul>{{^none}}empty{{/none}}{{#obj}}{{k}}{{/obj}}{{#str}}[{{.}}]{{/str}}{{=<% %>=}}<% n %>';
    const data = { items: [{ name: '<a&b>', raw: '<i>', n: 2, flag: true }, { name: 'x', raw: '', n: 0, flag: false }], none: [], obj: { k: 'v' }, str: 's', n: 7 };
    expect(renderContent({ subject: 's', html, text: null }, data, null).html).toBe(Mustache.render(html, data));
  });
});

describe('pickLanguage', () => {
  const have = ['en', 'pt', 'de-CH'];
  test.each([
    ['de-CH', 'de-CH'], ['DE-ch', 'de-CH'], ['pt-BR', 'pt'], ['pt', 'pt'], ['fr', 'en'], [undefined, 'en'],
  ])('%s → %s', (requested, used) => {
    expect(pickLanguage(requested, have, 'en')).toBe(used);
  });

  test('not BCP 47 is 400 naming the field; nothing to fall back to is 422', () => {
    const bad = refusal(() => pickLanguage('not a tag', have, 'en'));
    expect([bad.kind, bad.message]).toEqual(['invalid', 'invalid request body: language: "not a tag" is not a BCP 47 language tag']);
    const none = refusal(() => pickLanguage('fr-CA', ['de'], 'en'));
    expect([none.kind, none.message]).toEqual(['unprocessable', 'no localization for fr-CA, then fr, then en (the default language); the version has de']);
    expect(refusal(() => pickLanguage(undefined, [], 'en')).kind).toBe('unprocessable');
  });
});
