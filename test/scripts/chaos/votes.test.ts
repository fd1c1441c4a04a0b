import { describe, expect, it } from 'vitest';
import { type AcknowledgedVote, lastVotes, voteFindings } from '../../../scripts/chaos/votes.ts';

const vote = (postId: string, agentId: string, value: AcknowledgedVote['value']): AcknowledgedVote => ({ postId, agentId, value });
/** Agent a supported p1, then changed to contest; agent b supported p1. */
const acknowledged = [vote('p1', 'a', 'support'), vote('p1', 'b', 'support'), vote('p1', 'a', 'contest')];
const tally = { id: 'p1', supportCount: 1, contestCount: 1 };

describe('lastVotes', () => {
  it('expects a re-cast vote at its last acknowledged value', () => {
    expect([...lastVotes(acknowledged).values()]).toEqual([vote('p1', 'a', 'contest'), vote('p1', 'b', 'support')]);
  });
});

describe('voteFindings', () => {
  it('finds nothing when every vote holds its last value and the tally counts them', () => {
    const rows = [vote('p1', 'a', 'contest'), vote('p1', 'b', 'support')];
    expect(voteFindings(lastVotes(acknowledged), rows, [tally])).toEqual({ lost: 0, wrongValue: 0, wrongTally: 0 });
  });

  it('finds a vote whose row kept an earlier value although its pair exists', () => {
    const rows = [vote('p1', 'a', 'support'), vote('p1', 'b', 'support')];
    expect(voteFindings(lastVotes(acknowledged), rows, [tally])).toMatchObject({ lost: 0, wrongValue: 1 });
  });

  it("finds a post whose tally does not count its votes' last values", () => {
    const rows = [vote('p1', 'a', 'contest'), vote('p1', 'b', 'support')];
    expect(voteFindings(lastVotes(acknowledged), rows, [{ ...tally, supportCount: 2, contestCount: 0 }]).wrongTally).toBe(1);
  });

  it('counts an acknowledged vote with no row as lost', () => {
    expect(voteFindings(lastVotes(acknowledged), [vote('p1', 'b', 'support')], [tally]).lost).toBe(1);
  });
});
