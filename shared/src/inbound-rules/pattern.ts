// The two pattern dialects a routing rule matches strings with (docs/inbound-rules.md):
// a glob (`*` is any run of characters; everything else literal, case-insensitive,
// whole value) and a bounded regular-expression subset checked when the rule is
// saved. Pure TypeScript: the edge (workerd) and the relay node run the same code.

/** A string pattern: a glob, or `{regex}` in the bounded dialect below. */
export type Pattern = string | { regex: string };

/** Longest glob or regex source a rule may hold. */
export const PATTERN_MAX_LENGTH = 200;
/** A regex looks at no more than this many characters of a value (a glob at 998, RFC 5322's line). */
export const REGEX_INPUT_MAX = 256;
export const GLOB_INPUT_MAX = 998;
/** Variable-length quantifiers (`*`, `+`, `?`, `{n,m}`) one regex may hold: backtracking costs at most about input^this. */
export const REGEX_MAX_QUANTIFIERS = 3;
/** The largest bound in `{n}` / `{n,m}`. */
export const REGEX_MAX_REPEAT = 100;

/**
 * Why `source` is not in the regex dialect, or null when it is. The dialect:
 * literals, `.`, escapes `\d \w \s \D \W \S \b \B` and escaped punctuation,
 * classes `[...]`, anchors `^ $`, groups `(...)` and `(?:...)`, alternation
 * `|`, quantifiers `* + ? {n} {n,} {n,m}` (m at most 100). Refused: back
 * references, lookaround, named groups, a quantifier on a group that holds a
 * quantifier or an alternation (the shapes of catastrophic backtracking),
 * more than 3 variable quantifiers, and anything JavaScript would not compile.
 */
export function regexProblem(source: string): string | null {
  if (source.length === 0) return 'regex must not be empty';
  if (source.length > PATTERN_MAX_LENGTH) return `regex is longer than ${PATTERN_MAX_LENGTH} characters`;
  // Per open group: whether it holds a quantifier or an alternation so far.
  const groups: { risky: boolean }[] = [];
  let quantifiers = 0;
  let lastGroupRisky: boolean | null = null; // the group just closed, for a quantifier that follows it
  let canQuantify = false;
  for (let i = 0; i < source.length; i++) {
    const ch = source[i]!;
    const closedGroup = lastGroupRisky;
    lastGroupRisky = null;
    if (ch === '\\') {
      const next = source[i + 1];
      if (next === undefined) return 'regex ends with a lone backslash';
      if (/[1-9]/.test(next)) return `back reference \\${next} is not allowed`;
      if (next === 'k') return 'named back reference \\k is not allowed';
      if (next === 'u' || next === 'x' || next === 'c' || next === 'p' || next === 'P') return `escape \\${next} is not allowed (write the character itself)`;
      i++;
      canQuantify = !(next === 'b' || next === 'B');
      continue;
    }
    if (ch === '[') {
      // A class: read to its closing bracket (escapes inside taken as they are).
      let j = i + 1;
      if (source[j] === '^') j++;
      if (source[j] === ']') j++;
      while (j < source.length && source[j] !== ']') j += source[j] === '\\' ? 2 : 1;
      if (j >= source.length) return 'regex has an unclosed [';
      i = j;
      canQuantify = true;
      continue;
    }
    if (ch === '(') {
      if (source[i + 1] === '?') {
        const kind = source.slice(i + 1, i + 4);
        if (kind.startsWith('?:')) {
          i++;
          i++;
          groups.push({ risky: false });
          canQuantify = false;
          continue;
        }
        if (kind.startsWith('?=') || kind.startsWith('?!')) return 'lookahead (?= or (?! is not allowed';
        if (kind.startsWith('?<=') || kind.startsWith('?<!')) return 'lookbehind (?<= or (?<! is not allowed';
        if (kind.startsWith('?<')) return 'named groups (?<name> are not allowed';
        return `group modifier (${kind} is not allowed`;
      }
      groups.push({ risky: false });
      canQuantify = false;
      continue;
    }
    if (ch === ')') {
      const g = groups.pop();
      if (!g) return 'regex has an unmatched )';
      lastGroupRisky = g.risky;
      if (g.risky && groups.length) groups.at(-1)!.risky = true;
      canQuantify = true;
      continue;
    }
    if (ch === '|') {
      if (groups.length) groups.at(-1)!.risky = true;
      canQuantify = false;
      continue;
    }
    const quantifier = quantifierAt(source, i);
    if (quantifier) {
      if (!canQuantify) return `quantifier ${quantifier.text} has nothing to repeat`;
      if (quantifier.max !== null && quantifier.max > REGEX_MAX_REPEAT) return `repeat ${quantifier.text} is over ${REGEX_MAX_REPEAT}`;
      if (quantifier.min > REGEX_MAX_REPEAT) return `repeat ${quantifier.text} is over ${REGEX_MAX_REPEAT}`;
      if (closedGroup) return `nested quantifier: ${quantifier.text} repeats a group that holds a quantifier or |`;
      if (quantifier.min !== quantifier.max) quantifiers++;
      if (quantifiers > REGEX_MAX_QUANTIFIERS) return `more than ${REGEX_MAX_QUANTIFIERS} variable quantifiers (* + ? {n,m})`;
      if (groups.length) groups.at(-1)!.risky = true;
      i += quantifier.text.length - 1;
      // A lazy or possessive-looking suffix: `?` after a quantifier makes it lazy, which is allowed.
      if (source[i + 1] === '?') i++;
      canQuantify = false;
      continue;
    }
    canQuantify = ch !== '^' && ch !== '$';
  }
  if (groups.length) return 'regex has an unclosed (';
  try {
    new RegExp(source, 'i');
  } catch (err) {
    return `regex does not compile: ${err instanceof Error ? err.message : String(err)}`;
  }
  return null;
}

function quantifierAt(source: string, i: number): { text: string; min: number; max: number | null } | null {
  const ch = source[i];
  if (ch === '*') return { text: '*', min: 0, max: null };
  if (ch === '+') return { text: '+', min: 1, max: null };
  if (ch === '?') return { text: '?', min: 0, max: 1 };
  if (ch !== '{') return null;
  const m = /^\{(\d{1,4})(,(\d{0,4}))?\}/.exec(source.slice(i));
  if (!m) return null;
  const min = Number(m[1]);
  const max = m[2] === undefined ? min : m[3] === '' ? null : Number(m[3]);
  return { text: m[0], min, max };
}

/** Why a pattern is refused, or null. */
export function patternProblem(pattern: Pattern): string | null {
  if (typeof pattern === 'string') {
    if (pattern.length === 0) return 'pattern must not be empty';
    if (pattern.length > PATTERN_MAX_LENGTH) return `pattern is longer than ${PATTERN_MAX_LENGTH} characters`;
    return null;
  }
  return regexProblem(pattern.regex);
}

/** A compiled pattern: tests one value. */
export type Matcher = (value: string) => boolean;

/** Compiles a pattern already checked by patternProblem (an unchecked one may throw). */
export function compilePattern(pattern: Pattern): Matcher {
  if (typeof pattern !== 'string') {
    if (regexProblem(pattern.regex)) return () => false;
    const re = new RegExp(pattern.regex, 'i');
    return (value) => re.test(value.slice(0, REGEX_INPUT_MAX));
  }
  const glob = pattern.toLowerCase();
  if (!glob.includes('*')) return (value) => value.toLowerCase() === glob;
  return (value) => globMatch(glob, value.slice(0, GLOB_INPUT_MAX).toLowerCase());
}

/**
 * `*` matches any run of characters. The two-pointer algorithm: each star
 * restarts at most once per input position, so the cost is at most
 * pattern × input, with no backtracking blow-up.
 */
export function globMatch(glob: string, value: string): boolean {
  let p = 0;
  let v = 0;
  let star = -1;
  let mark = 0;
  while (v < value.length) {
    if (p < glob.length && glob[p] !== '*' && glob[p] === value[v]) {
      p++;
      v++;
    } else if (p < glob.length && glob[p] === '*') {
      star = p++;
      mark = v;
    } else if (star !== -1) {
      p = star + 1;
      v = ++mark;
    } else {
      return false;
    }
  }
  while (p < glob.length && glob[p] === '*') p++;
  return p === glob.length;
}
