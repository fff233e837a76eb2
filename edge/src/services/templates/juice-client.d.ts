// juice's client entry (juice/client.js) has the API of its main entry
// (juice.d.ts) without the resource fetching; its package declares no types for it.
declare module 'juice/client' {
  import juice = require('juice');
  export = juice;
}
