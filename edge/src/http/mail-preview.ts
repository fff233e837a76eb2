// A stored message's HTML as a page of its own, for the console's preview
// iframe (docs/console-ui.md "Inbound HTML"). The mail comes from the
// Internet, so its answer carries the policy, not the page that frames it:
// no script anywhere (CSP `sandbox` without allow-scripts, as the iframe's
// own sandbox), no request to any host unless the reader asked for remote
// images, framed only by the console's own origin, never cached.

/** `img-src` for each choice: by default only images inside the message (data: URIs). */
const IMAGES = { blocked: 'data:', remote: 'data: https: http:' } as const;
export type PreviewImages = keyof typeof IMAGES;

export function previewPolicy(images: PreviewImages): string {
  return `default-src 'none'; img-src ${IMAGES[images]}; style-src 'unsafe-inline'; font-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'self'; sandbox allow-popups allow-popups-to-escape-sandbox`;
}

/** The answer: the HTML as given (a message without HTML: an empty page). */
export function previewResponse(html: string, images: PreviewImages): Response {
  // Links open in a new tab (the frame cannot navigate itself away); the referrer never leaves.
  const head = '<!doctype html><meta charset="utf-8"><meta name="referrer" content="no-referrer"><base target="_blank">';
  return new Response(head + html, {
    status: 200,
    headers: {
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': previewPolicy(images),
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'Cross-Origin-Resource-Policy': 'same-origin',
      'Cache-Control': 'private, no-store',
    },
  });
}
