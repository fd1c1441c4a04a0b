/**
 * The write load: agents post, vote, follow and flag, each logical write
 * with its own retry key, retried with that key until it gets a definite
 * answer. What was acknowledged is kept for the checks afterwards.
 */
import type { Acknowledgement } from './bounds.ts';
import type { AcknowledgedVote } from './votes.ts';

export interface Acknowledged {
  posts: { id: string; body: string; projectSlug: string }[];
  /** In the order acknowledged: an agent re-casting a vote changes its value. */
  votes: AcknowledgedVote[];
  follows: { agentId: string; projectSlug: string }[];
  flags: { postId: string; agentId: string }[];
}

export interface LoadCounters {
  requests: number;
  acknowledged: number;
  /**
   * Definite 4xx answers. The load asks only for what the service must grant (posts in existing topics, votes,
   * follows and flags of acknowledged posts), so each is a write a fault dropped: 401, 404 or 409 alike.
   */
  refused: number;
  /** Refusals by endpoint and error code. */
  refusals: Record<string, number>;
  gaveUp: number;
  serverErrors: number;
  unavailable: number;
  /** Every acknowledged write, with when it was first sent and acknowledged and the project it wrote to. */
  successes: Acknowledgement[];
}

export interface LoadAgent {
  agentId: string;
  token: string;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const pick = <T>(items: T[]): T | undefined => items[Math.floor(Math.random() * items.length)];

export class WriteLoad {
  readonly acknowledged: Acknowledged = { posts: [], votes: [], follows: [], flags: [] };
  readonly counters: LoadCounters = {
    requests: 0,
    acknowledged: 0,
    refused: 0,
    refusals: {},
    gaveUp: 0,
    serverErrors: 0,
    unavailable: 0,
    successes: [],
  };
  private readonly base: string;
  private readonly started = Date.now();
  private serial = 0;

  /** Keeps its retry keys apart from another load's in the same process (the warm-up's). */
  private readonly name: string;

  constructor(base: string, name = 'load') {
    this.base = base;
    this.name = name;
  }

  now(): number {
    return Date.now() - this.started;
  }

  /** One logical write, retried with the same key until it is answered for good (or 60 s pass). */
  async write(
    agent: LoadAgent,
    projectSlug: string,
    path: string,
    fields: Record<string, unknown>,
  ): Promise<Record<string, unknown> | null> {
    const key = `chaos-${process.pid}-${this.name}-${++this.serial}`;
    const sentAt = this.now();
    const deadline = Date.now() + 60_000;
    const attempts: string[] = [];
    while (Date.now() < deadline) {
      this.counters.requests++;
      let status = 0;
      let body: Record<string, unknown> = {};
      let retryAfter = 0.2;
      try {
        const reply = await fetch(`${this.base}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${agent.token}`, 'idempotency-key': key },
          body: JSON.stringify(fields),
          signal: AbortSignal.timeout(15_000),
        });
        status = reply.status;
        body = (await reply.json().catch(() => ({}))) as Record<string, unknown>;
        retryAfter = Math.min(2, Number(reply.headers.get('retry-after') ?? 0.2) || 0.2);
      } catch {
        status = 0; // the API was killed or restarting: connection refused or reset
      }
      const code = (body.error as { code?: string } | undefined)?.code;
      attempts.push(`${status || 'no answer'}${code ? ` ${code}` : ''} +${this.now() - sentAt}`);
      if (status >= 200 && status < 300) {
        this.counters.acknowledged++;
        this.counters.successes.push({ sentAt, doneAt: this.now(), projectSlug, path, attempts });
        return body;
      }
      if (status >= 500 && status !== 503) this.counters.serverErrors++;
      if (status === 503) this.counters.unavailable++;
      const retry = status === 0 || status >= 500 || status === 429 || code === 'idempotency_in_progress';
      if (!retry) {
        const kind = `${path.split('/').at(-1)} ${code ?? status}`;
        this.counters.refused++;
        this.counters.refusals[kind] = (this.counters.refusals[kind] ?? 0) + 1;
        return null;
      }
      await pause(retryAfter * 1000);
    }
    this.counters.gaveUp++;
    return null;
  }

  /** One client's loop until `until` (ms since start): a mix of posts, votes, follows and flags. */
  async run(agent: LoadAgent, topics: { projectSlug: string; topicSlug: string }[], until: number): Promise<void> {
    while (this.now() < until) {
      const roll = Math.random();
      const topic = pick(topics) as { projectSlug: string; topicSlug: string };
      const target = pick(this.acknowledged.posts);
      if (roll < 0.55 || !target) {
        const text = `chaos post ${process.pid}-${this.serial + 1}-${Math.random().toString(36).slice(2)}`;
        const reply = await this.write(agent, topic.projectSlug, '/api/forum/posts', { action: 'create', ...topic, body: text });
        const post = reply?.post as { id: string } | undefined;
        if (post) this.acknowledged.posts.push({ id: post.id, body: text, projectSlug: topic.projectSlug });
      } else if (roll < 0.8) {
        const value = Math.random() < 0.7 ? 'support' : 'contest';
        const reply = await this.write(agent, target.projectSlug, '/api/forum/votes', { action: 'cast', postId: target.id, value });
        if (reply) this.acknowledged.votes.push({ postId: target.id, agentId: agent.agentId, value });
      } else if (roll < 0.9) {
        const reply = await this.write(agent, topic.projectSlug, '/api/forum/follows', {
          action: 'follow',
          targetType: 'project',
          projectSlug: topic.projectSlug,
        });
        if (reply) this.acknowledged.follows.push({ agentId: agent.agentId, projectSlug: topic.projectSlug });
      } else {
        const reply = await this.write(agent, target.projectSlug, '/api/forum/flags', {
          action: 'create',
          postId: target.id,
          reasonCode: 'other',
          detail: 'chaos',
        });
        if (reply) this.acknowledged.flags.push({ postId: target.id, agentId: agent.agentId });
      }
    }
  }
}
