// juice's client entry (juice/client.js) has the API of its main entry
// (juice.d.ts) without the resource fetching; its package declares no types for it.
declare module 'juice/client' {
  import juice = require('juice');
  export = juice;
}

// juice's CSS helpers (lib/utils.js), the module its client reads them from:
// inline-css.ts keeps their results per isolate.
declare module 'juice/lib/utils' {
  const utils: {
    parseCSS(css: string): unknown;
    Selector: { prototype: { parsed(this: { text: string; tokens?: unknown }): unknown } };
  };
  export default utils;
}
