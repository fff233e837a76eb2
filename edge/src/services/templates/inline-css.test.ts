import { describe, expect, test } from 'vitest';
import { loadConfig } from '@edgemail/shared';
import { ServiceError } from '../errors.js';
import { inlineCss, inlineWork, MAX_INLINE_WORK } from './inline-css.js';
import { renderContent, renderLimits } from './render.js';

const LIMITS = renderLimits(loadConfig({}).config);
const page = (style: string, body: string) => `<html><head><style>${style}</style></head><body>${body}</body></html>`;
/** The `style` attribute of the element whose id is `id`. */
const styleOf = (html: string, id: string) => new RegExp(`id="${id}"[^>]*?style="([^"]*)"`).exec(html)?.[1];
/** That attribute's declarations by property (their order follows specificity, which the values already show). */
const declarations = (html: string, id: string) => Object.fromEntries((styleOf(html, id) ?? '').split(';').filter((d) => d.trim()).map((d) => d.split(':').map((s) => s.trim())));

describe('inlineCss', () => {
  test('rules go into style attributes; the <style> stays whole, with what cannot be inlined only there', () => {
    const css = 'p { color: red } a:hover { color: green } @media (max-width: 600px) { p { color: pink !important } } p::selection { color: blue }';
    const { html, inlined } = inlineCss(page(css, '<p id="p">Hi <a id="a" href="https://e.org">l</a></p>'));
    expect(inlined).toBe(true);
    expect(html).toContain(`<style>${css}</style>`);
    expect(styleOf(html, 'p')).toBe('color: red;');
    expect(html).toContain('<a id="a" href="https://e.org">'); // :hover is not inlined
  });

  test('specificity, then order; the template\'s own later <style> wins a tie over the stylesheet first in <head>', () => {
    const html = '<html><head><style>p { color: red; margin: 0 } .x { color: blue } #i.x { color: black }</style><style>p { margin: 4px } .x { color: teal }</style></head>'
      + '<body><p id="a">a</p><p id="b" class="x">b</p><p id="i" class="x">i</p></body></html>';
    const out = inlineCss(html).html;
    expect(declarations(out, 'a')).toEqual({ color: 'red', margin: '4px' });
    expect(declarations(out, 'b')).toEqual({ color: 'teal', margin: '4px' });
    expect(declarations(out, 'i')).toEqual({ color: 'black', margin: '4px' });
  });

  test('an element\'s own style wins over any rule but an !important one', () => {
    const out = inlineCss(page('p { color: red; padding: 1px } .k { margin: 0 !important }', '<p id="p" class="k" style="color: black; margin: 9px">x</p>')).html;
    expect(declarations(out, 'p')).toEqual({ padding: '1px', color: 'black', margin: '0' });
  });

  test('selectors the engine cannot match are left out, the rest still inlined; <style data-embed> is not inlined', () => {
    const out = inlineCss('<html><head><style>p:unknown-state { color: red } p[ { x: y } li:nth-child(2) { color: teal }</style><style data-embed>li { margin: 0 }</style></head>'
      + '<body><ul><li id="one">1</li><li id="two">2</li></ul></body></html>').html;
    expect(styleOf(out, 'one')).toBeUndefined();
    expect(styleOf(out, 'two')).toBe('color: teal;');
  });

  test('markup, entities and text the data wrote are kept as they are', () => {
    const body = '<p id="p">A &amp; B &lt;i&gt; {{not a tag}} <%= nor this %> é</p><a href="https:&#x2F;&#x2F;e.org?a&#x3D;1&amp;b=2">l</a>';
    const out = inlineCss(page('p { color: red }', body)).html;
    expect(out).toBe(page('p { color: red }', body.replace('<p id="p">', '<p id="p" style="color: red;">')));
  });

  test('the parsed CSS and selectors kept per isolate give the same result as a first parse, whatever the HTML', () => {
    const css = `td.n${Math.random().toString(36).slice(2)} , p { color: red !important } a::before { content: 'x' } p:first-child { margin: 0 }`;
    const first = inlineCss(page(css, '<p id="a" style="color: blue">a</p><p id="b">b</p>')).html;
    expect([declarations(first, 'a'), declarations(first, 'b')]).toEqual([{ color: 'red', margin: '0' }, { color: 'red' }]);
    const again = inlineCss(page(css, '<p id="a" style="color: blue">a</p><p id="b">b</p>')).html;
    expect(again).toBe(first);
    const other = inlineCss(page(css, '<div><p id="c" style="padding: 1px">c</p></div>')).html;
    expect(declarations(other, 'c')).toEqual({ color: 'red', margin: '0', padding: '1px' });
  });

  test('no <style>: untouched; past the work bound: untouched (sent with its <style> only)', () => {
    expect(inlineCss('<p>x</p>')).toEqual({ html: '<p>x</p>', inlined: false });
    const css = `.a { color: red } ${'x'.repeat(50_000)} {}`;
    const big = page(css, '<p class="a">x</p>'.repeat(200));
    expect(inlineWork(big)).toBeGreaterThan(MAX_INLINE_WORK);
    const started = performance.now();
    expect(inlineCss(big)).toEqual({ html: big, inlined: false });
    expect(performance.now() - started).toBeLessThan(50);
  });

  test('hostile CSS or HTML at the bound costs a bounded time, whatever its shape', () => {
    const rules = (n: number) => Array.from({ length: n }, (_, i) => `.c${i} td { color: #${String(i % 1000).padStart(3, '0')} }`).join('\n');
    const shapes = [
      { name: 'the most CSS (few elements)', css: rules(1000).slice(0, 23_500), rows: 2 },
      { name: 'the most elements (some CSS)', css: rules(100), rows: 800 },
    ];
    for (const { name, css, rows } of shapes) {
      const html = page(css, '<table>' + '<tr><td class="c1">x</td></tr>'.repeat(rows) + '</table>');
      expect(inlineWork(html)).toBeLessThanOrEqual(MAX_INLINE_WORK);
      const started = performance.now();
      expect(inlineCss(html).inlined).toBe(true);
      const ms = performance.now() - started;
      console.info(`${name}: ${css.length} characters of CSS, ${rows * 2} elements, work ${inlineWork(html)}: inlined in ${ms.toFixed(0)} ms`);
      expect(ms).toBeLessThan(5000); // ~150 ms on a quiet machine; generous for a loaded CI
    }
  });
});

describe('renderContent inlines', () => {
  test('the stylesheet and the template\'s <style> into the rendered HTML; the text part is untouched', () => {
    const content = { subject: 'Hi', html: '<html><head><style>.total { font-weight: 600 }</style></head><body>{{#rows}}<tr class="{{cls}}"><td>{{v}}</td></tr>{{/rows}}</body></html>', text: '{{#rows}}{{v}} {{/rows}}' };
    const out = renderContent(content, { rows: [{ cls: 'item', v: 1 }, { cls: 'total', v: 2 }] }, 'td { padding: 4px } tr:nth-child(2) td { color: red }', LIMITS);
    expect(out.html).toBe('<html><head><style>td { padding: 4px } tr:nth-child(2) td { color: red }</style><style>.total { font-weight: 600 }</style></head><body>'
      + '<tr class="item"><td style="padding: 4px;">1</td></tr><tr class="total" style="font-weight: 600;"><td style="padding: 4px; color: red;">2</td></tr></body></html>');
    expect(out.text).toBe('1 2 ');
  });

  test('what inlining adds counts against templates.max_rendered_bytes', () => {
    const content = { subject: 's', html: '<style>p{margin:0}</style>' + '<p>x</p>'.repeat(10), text: null };
    const plain = renderContent({ ...content, html: content.html }, {}, null, { ...LIMITS, maxBytes: 1000 }).html!;
    expect(plain.length).toBeGreaterThan(200);
    try {
      renderContent(content, {}, null, { ...LIMITS, maxBytes: 150 });
      expect.unreachable();
    } catch (e) {
      expect((e as ServiceError).message).toBe('rendered template exceeds 150 bytes (templates.max_rendered_bytes)');
    }
  });
});
