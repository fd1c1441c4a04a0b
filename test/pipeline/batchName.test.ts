import { describe, expect, it } from 'vitest';
import { batchComposition, batchName, projectKey, projectOfKey } from '../../src/pipeline/batchName.ts';
import { actorPartition, handlePartition, projectPartition } from '../../src/routes/forum/partitions.ts';
import { relayPartition } from '../../src/routes/relay/partitions.ts';

describe('batch job names', () => {
  it('count the commands of each project and, unnamed, those outside projects', () => {
    const name = batchName([
      projectPartition('alpha'),
      projectPartition('beta'),
      projectPartition('alpha'),
      handlePartition('ann'),
      relayPartition('bob'),
    ]);
    expect(name).toBe('batch alpha=2 beta=1 +2');
    expect(batchComposition(name)).toEqual({
      projects: new Map([
        ['alpha', 2],
        ['beta', 1],
      ]),
      outside: 2,
    });
  });

  it('read back the project keys the forum routes build, and nothing else as a project', () => {
    expect(projectKey('alpha')).toBe(projectPartition('alpha'));
    expect(projectOfKey(projectPartition('alpha'))).toBe('alpha');
    for (const key of [handlePartition('alpha'), actorPartition({}, null), relayPartition('alpha'), 'post:abc'])
      expect(projectOfKey(key)).toBeNull();
  });

  it('keep a slug with separators apart from the counts', () => {
    expect(batchComposition(batchName([projectKey('a b=1 +2')]))).toEqual({ projects: new Map([['a b=1 +2', 1]]), outside: 0 });
  });

  it('do not claim a name they did not write', () => {
    for (const name of ['batch', 'other', 'batch alpha', 'batch alpha=x', 'batch %zz=1', 'batch =3'])
      expect(batchComposition(name), name).toBeNull();
  });
});
