import { describe, expect, it } from 'vitest';
import { compilePattern, globMatch, regexProblem, REGEX_INPUT_MAX } from './pattern.js';
import { compileRule, firstMatch, matchProblems, needsOnlyRecipient, type RuleMatch } from './rule.js';

const rules = (...list: { match: RuleMatch; action: string }[]) => list.map(compileRule);

describe('glob patterns', () => {
  it('matches exact, *@domain and local+*@domain, case-insensitively and whole', () => {
    expect(compilePattern('Ann@Acme.test')('ann@acme.test')).toBe(true);
    expect(compilePattern('ann@acme.test')('xann@acme.test')).toBe(false);
    expect(compilePattern('*@acme.test')('bob@ACME.test')).toBe(true);
    expect(compilePattern('*@acme.test')('bob@acme.test.evil')).toBe(false);
    expect(compilePattern('support+*@acme.test')('support+123@acme.test')).toBe(true);
    expect(compilePattern('support+*@acme.test')('support@acme.test')).toBe(false);
    expect(compilePattern('*invoice*')('Your INVOICE #3')).toBe(true);
  });
  it('stays linear on inputs shaped against it', () => {
    const t = performance.now();
    expect(globMatch('*a*a*a*a*a*a*a*b', 'a'.repeat(998))).toBe(false);
    expect(performance.now() - t).toBeLessThan(200);
  });
});

describe('the regex dialect', () => {
  it.each([
    ['(a+)+$', 'nested quantifier'],
    ['(a|aa)*', 'nested quantifier'],
    ['(x)\\1', 'back reference'],
    ['a(?=b)', 'lookahead'],
    ['(?<!a)b', 'lookbehind'],
    ['(?<n>a)', 'named groups'],
    ['a{1,1000}', 'over 100'],
    ['a*b*c*d*', 'more than 3'],
    ['[abc', 'unclosed ['],
    ['(ab', 'unclosed ('],
    ['x'.repeat(201), 'longer than 200'],
  ])('refuses %s', (source, problem) => {
    expect(regexProblem(source)).toContain(problem);
  });
  it.each(['^sales-\\d+@acme\\.test$', '^(?:billing|invoices)@', '[a-z]{2,10}\\.test$', '(ab)+c', 'x(?:y|z)w'])('takes %s', (source) => {
    expect(regexProblem(source)).toBeNull();
  });
  it('evaluates the worst allowed shape over its bounded input quickly', () => {
    const re = compilePattern({ regex: '^.*a.*a.*b$' });
    const t = performance.now();
    expect(re('a'.repeat(100_000))).toBe(false);
    expect(performance.now() - t).toBeLessThan(500);
    // Only the first REGEX_INPUT_MAX characters are looked at.
    expect(compilePattern({ regex: 'z$' })(`${'a'.repeat(REGEX_INPUT_MAX)}z`)).toBe(false);
  });
});

describe('rules', () => {
  it('refuses bad patterns by field', () => {
    expect(matchProblems({ recipient: { regex: '(a+)+' }, header: { name: 'X:Y', pattern: '*' } })).toEqual({
      'match.recipient.regex': expect.stringContaining('nested quantifier'),
      'match.header.name': expect.any(String),
    });
    expect(matchProblems({ recipient: '*@acme.test' })).toBeNull();
  });
  it('takes the first rule that matches, in order', () => {
    const list = rules(
      { match: { recipient: 'vip@acme.test' }, action: 'store' },
      { match: { recipient: '*@acme.test' }, action: 'refuse' },
    );
    expect(firstMatch(list, { recipients: ['vip@acme.test'] })).toEqual({ decided: true, rule: list[0]!.rule });
    expect(firstMatch(list, { recipients: ['x@acme.test'] })).toEqual({ decided: true, rule: list[1]!.rule });
    expect(firstMatch(list, { recipients: ['x@other.test'] })).toEqual({ decided: true, rule: null });
  });
  it('waits for a fact a rule before the match needs (RCPT knows only the recipient)', () => {
    const list = rules(
      { match: { sender: '*@partner.test' }, action: 'store' },
      { match: { recipient: '*@acme.test' }, action: 'refuse' },
    );
    expect(firstMatch(list, { recipients: ['x@acme.test'] })).toMatchObject({ decided: false });
    expect(firstMatch(list, { recipients: ['x@acme.test'], sender: 'a@other.test' })).toEqual({ decided: true, rule: list[1]!.rule });
    expect(needsOnlyRecipient(list[1]!.rule.match)).toBe(true);
    expect(needsOnlyRecipient(list[0]!.rule.match)).toBe(false);
  });
  it('matches headers, verdicts and the spam action', () => {
    const facts = {
      recipients: ['a@acme.test'], sender: 's@x.test', subject: 'Hello',
      headers: { 'x-tag': ['one', 'two'], 'list-id': 'news' },
      auth: { spf: 'pass', dkim: 'fail', dmarc: 'fail', aligned: false },
      spam: { action: 'add header' },
    };
    const t = (match: RuleMatch) => compileRule({ match }).test(facts);
    expect(t({ header: { name: 'X-Tag', pattern: 'two' } })).toBe(true);
    expect(t({ header: { name: 'x-missing', pattern: '*' } })).toBe(false);
    expect(t({ dmarc: ['fail'], aligned: false })).toBe(true);
    expect(t({ spf: ['fail', 'softfail'] })).toBe(false);
    expect(t({ spam_action: ['add header', 'reject'] })).toBe(true);
    expect(compileRule({ match: { spam_action: ['reject'] } }).test({ ...facts, spam: null })).toBe(false);
    expect(t({})).toBe(true);
  });
});
