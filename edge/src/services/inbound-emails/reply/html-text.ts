// The text of an HTML-only message, for reply stripping: block elements end
// lines, `<br>` is a newline, and a `<blockquote>` (Apple Mail, Thunderbird,
// Gmail's quoted history) is written as `> ` lines, as a plain-text client
// would quote it, so the same rules find it. One pass over the tags ([^<>]* stops at
// the next '<', so no character is scanned more than twice).

const BLOCK = new Set(['p', 'div', 'tr', 'li', 'ul', 'ol', 'table', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'pre', 'hr', 'center', 'section', 'article', 'header', 'footer']);
const DROPPED = new Set(['script', 'style', 'head', 'title']);
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]{2,6});/gi, (whole, name: string) => {
    if (name[0] === '#') {
      const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[name.toLowerCase()] ?? whole;
  });
}

/** Plain text of `html`, quotes as `> ` lines. */
export function htmlToText(html: string): string {
  const lines: string[] = [];
  let line = '';
  let depth = 0; // blockquotes open
  let dropped: string | null = null; // inside <script>, <style>, …
  const endLine = () => {
    const text = line.replace(/[ \t\u00a0]+/g, ' ').trim();
    lines.push(depth && text ? `${'>'.repeat(depth)} ${text}` : depth ? '>'.repeat(depth) : text);
    line = '';
  };
  // [^<>]* stops at the next '<', so a tag that never closes costs only up to there.
  const tag = /<(\/?)([a-zA-Z][a-zA-Z0-9]*)[^<>]*>|<!--|<![^<>]*>/g;
  let at = 0;
  for (let m = tag.exec(html); m; m = tag.exec(html)) {
    if (!dropped) line += decodeEntities(html.slice(at, m.index).replace(/\s+/g, ' '));
    if (m[0] === '<!--') {
      const end = html.indexOf('-->', tag.lastIndex);
      tag.lastIndex = end < 0 ? html.length : end + 3;
    }
    at = tag.lastIndex;
    const name = m[2]?.toLowerCase();
    if (!name) continue;
    const closing = m[1] === '/';
    if (dropped) { if (closing && name === dropped) dropped = null; continue; }
    if (DROPPED.has(name) && !closing) { dropped = name; continue; }
    if (name === 'br') endLine();
    else if (name === 'blockquote') { if (line.trim()) endLine(); depth = Math.max(0, depth + (closing ? -1 : 1)); }
    else if (BLOCK.has(name) && line.trim()) endLine();
  }
  if (!dropped) line += decodeEntities(html.slice(at).replace(/\s+/g, ' '));
  if (line.trim()) endLine();
  // One blank line at most between paragraphs.
  return lines.join('\n').replace(/\n{3,}/g, '\n\n').trim();
}
