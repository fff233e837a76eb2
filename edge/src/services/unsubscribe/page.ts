// The small HTML pages of one-click unsubscribe: the confirmation a person
// sees on opening the link (GET changes nothing: link scanners and
// prefetchers open links too), its result, and the refusals. No script, no
// style sheet, no image: the Content-Security-Policy allows nothing but the
// form posting back to this origin.
export const PAGE_CSP = "default-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export const pageHeaders = {
  'Content-Type': 'text/html; charset=utf-8',
  'Content-Security-Policy': PAGE_CSP,
  'Cache-Control': 'no-store',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
} as const;

const escape = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex">
<title>${escape(title)}</title></head>
<body><main><h1>${escape(title)}</h1>
${body}
</main></body></html>
`;
}

/** GET: what the button does, and the button (a form POSTing `List-Unsubscribe=One-Click` to the same link). */
export const confirmPage = (shownAddress: string, stream: string) => page('Unsubscribe',
  `<p>Stop <strong>${escape(stream)}</strong> mail to <strong>${escape(shownAddress)}</strong>?</p>
<form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe</button></form>`);

export const donePage = (shownAddress: string, stream: string) => page('Unsubscribed',
  `<p><strong>${escape(shownAddress)}</strong> will get no more <strong>${escape(stream)}</strong> mail from this sender.</p>`);

export const invalidPage = () => page('Link not valid',
  '<p>This unsubscribe link is not valid. Use the link of the message itself, unchanged.</p>');

export const expiredPage = () => page('Link expired',
  '<p>This unsubscribe link has expired. Use the link of a more recent message, or ask the sender.</p>');
