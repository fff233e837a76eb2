import { describe, expect, it } from 'vitest';
import { spamOfRecord, spamRejectedReason } from './spam.js';

const spam = { score: 7.5, required_score: 15, action: 'add header', symbols: ['A', 'B'] };

describe('spamOfRecord', () => {
  it('is null for an unscored message', () => {
    expect(spamOfRecord({ spam: null }, { reject: 10, mark: 5 })).toBeNull();
  });
  it('marks at the mark threshold, or at the reject threshold of a project whose refusal another project outvoted', () => {
    expect(spamOfRecord({ spam }, { reject: null, mark: null })).toEqual({ ...spam, marked: false });
    expect(spamOfRecord({ spam }, { reject: null, mark: 7.5 })).toMatchObject({ marked: true });
    expect(spamOfRecord({ spam }, { reject: null, mark: 7.6 })).toMatchObject({ marked: false });
    expect(spamOfRecord({ spam }, { reject: 7, mark: null })).toMatchObject({ marked: true });
  });
  it('names the score in a refusal\'s reason', () => {
    expect(spamRejectedReason({ spam })).toBe('spam score 7.5 reached the project\'s reject threshold (550 5.7.1 at DATA)');
  });
});
