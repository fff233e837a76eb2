import { describe, expect, test } from 'vitest';
import { ServiceError } from '../errors.js';
import { renderContent, withStylesheet } from './render.js';
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
