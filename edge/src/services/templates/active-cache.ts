// The active version's content as sends render it, kept per Worker isolate,
// so a template send does not wait on a read of its own before the send's
// statement. Safe because what is cached never changes: an active version is
// frozen (its localizations, and its stylesheet's CSS, templates.md), and
// sends read the version's own id. What can change, which version is active
// and the template's default language (the fallback), is not trusted from
// here: the send's statement checks both in the snapshot it writes in
// (send.ts, `templates_ok`) and the send renders again from a fresh read when
// either moved, so the very next send after an activation uses it.

/** Entries kept; least recently used first out. */
const MAX_ENTRIES = 500;
/** Characters of content kept in all (≈ 2 bytes each): a bound on the isolate's memory whatever the templates hold. */
const MAX_CHARS = 4_000_000;

interface Entry<T> { value: T; chars: number }

const entries = new Map<string, Entry<unknown>>();
let chars = 0;

const keyOf = (projectId: string, templateId: string, language: string | undefined) => `${projectId} ${templateId} ${language ?? ''}`;

export function cachedActive<T>(projectId: string, templateId: string, language: string | undefined): T | undefined {
  const key = keyOf(projectId, templateId, language);
  const hit = entries.get(key);
  if (!hit) return undefined;
  entries.delete(key);
  entries.set(key, hit);
  return hit.value as T;
}

/** Keeps `value` (of `size` characters) unless it alone is larger than the whole bound. */
export function keepActive<T>(projectId: string, templateId: string, language: string | undefined, value: T, size: number): void {
  const key = keyOf(projectId, templateId, language);
  forget(key);
  if (size > MAX_CHARS) return;
  entries.set(key, { value, chars: size });
  chars += size;
  while (entries.size > MAX_ENTRIES || chars > MAX_CHARS) forget(entries.keys().next().value!);
}

function forget(key: string): void {
  const old = entries.get(key);
  if (!old) return;
  entries.delete(key);
  chars -= old.chars;
}
