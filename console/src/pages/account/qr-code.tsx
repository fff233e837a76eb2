// A QR code drawn here, as SVG, from the otpauth:// URI: the secret never
// leaves the page for a third-party QR service. `uqr` only encodes the
// modules (a boolean matrix); we draw them as one path, so no markup string
// is injected and the CSP (no inline styles) holds.
import { encode } from 'uqr';

export function QrCode({ text, label }: { text: string; label: string }) {
  const { data, size } = encode(text, { ecc: 'M', border: 2 });
  let d = '';
  data.forEach((row, y) => row.forEach((on, x) => { if (on) d += `M${x} ${y}h1v1h-1z`; }));
  return (
    <svg class="qr-code" role="img" aria-label={label} viewBox={`0 0 ${size} ${size}`} shape-rendering="crispEdges">
      <rect width={size} height={size} fill="#fff" />
      <path d={d} fill="#000" />
    </svg>
  );
}
