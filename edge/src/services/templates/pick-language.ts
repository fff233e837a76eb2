// Which localization a render uses (docs/template-rendering.md, "Language"):
// the requested tag exactly, then its primary language subtag (`pt-BR` →
// `pt`), then the template's default language. Tags compare in canonical
// case (Intl's, as the localizations are stored), so `PT-br` finds `pt-BR`.
import { invalid, unprocessable } from '../errors.js';
import { canonicalLanguage as parseLanguage } from '../../contracts/template.js';

/** The canonical form of a BCP 47 tag, or null when it is not one: the localizations' own check. */
export function canonicalLanguage(tag: string): string | null {
  const parsed = parseLanguage(tag);
  return 'tag' in parsed ? parsed.tag : null;
}

/**
 * The language to render among `available`; throws 400 for a requested tag
 * that is not BCP 47 (`field` names it) and 422 when no step finds one.
 * @example pickLanguage('pt-BR', ['en', 'pt'], 'en') // 'pt'
 */
export function pickLanguage(requested: string | undefined, available: string[], defaultLanguage: string, field = 'language'): string {
  const have = new Map(available.map((a) => [canonicalLanguage(a) ?? a, a]));
  const tried: string[] = [];
  if (requested !== undefined) {
    const tag = canonicalLanguage(requested);
    if (!tag) throw invalid(`invalid request body: ${field}: ${JSON.stringify(requested)} is not a BCP 47 language tag`, { [field]: 'is not a BCP 47 language tag' });
    const primary = new Intl.Locale(tag).language;
    for (const step of [tag, primary]) {
      tried.push(step);
      const hit = have.get(step);
      if (hit) return hit;
    }
  }
  const fallback = canonicalLanguage(defaultLanguage) ?? defaultLanguage;
  tried.push(fallback);
  const hit = have.get(fallback);
  if (hit) return hit;
  const unique = [...new Set(tried)];
  throw unprocessable(available.length
    ? `no localization for ${unique.join(', then ')} (the default language); the version has ${available.join(', ')}`
    : 'the template version has no localizations: write them with PUT .../localizations first');
}
