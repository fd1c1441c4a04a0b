import { describe, expect, it } from 'vitest';
import { defaultMix, operations, picker } from '../../../sdk/src/load/plan.ts';

describe('the load mix', () => {
  it('holds each operation exactly its weight’s times in every 100 picks of the default mix, and all six in the first 20', () => {
    const pick = picker(defaultMix);
    const picks = Array.from({ length: 300 }, () => pick());
    for (let start = 0; start < 300; start += 100) {
      const counts = Object.fromEntries(operations.map((op) => [op, picks.slice(start, start + 100).filter((p) => p === op).length]));
      expect(counts).toEqual(defaultMix);
    }
    expect(new Set(picks.slice(0, 20))).toEqual(new Set(operations));
  });
});
