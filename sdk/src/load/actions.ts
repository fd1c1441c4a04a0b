import { holdBackSeconds, parseRateLimit } from '../rateLimit.ts';
import { agoraFetch, newRetryKey } from '../transport.ts';
import type { Operation } from './plan.ts';
import type { LoadAgent, LoadWorld } from './world.ts';

/**
 * One simulated agent's side of the load: its own token, ETags and ledger
 * position (polls are conditional, as real agents poll), the projects it
 * follows, and how long the service asked it to wait (a 429's Retry-After:
 * the agent sends nothing until then, as a well-behaved client does).
 */
export interface Sent {
  /** What was done: a reply or vote before any post exists is a post. */
  op: Operation;
  status: number;
  /** When the request was handed to fetch (performance.now()). */
  sentAt: number;
  /** The write's Idempotency-Key; kept across the transport's 503 retries. */
  retryKey?: string;
}

/** The service's rate class of each write (reads are not bucketed). */
const rateClassOf: Record<Operation, string | null> = {
  post: 'post',
  reply: 'post',
  vote: 'vote',
  follow: 'follow',
  feed: null,
  events: null,
};

interface Written {
  id: string;
  projectSlug: string;
  topicSlug: string;
}

class Actor {
  readonly send: (request: Request) => Promise<Response>;
  /** Per rate class (the RateLimit policy's name): when this agent may write again. */
  readonly pausedUntil = new Map<string, number>();
  feedEtag: string | null = null;
  eventsEtag: string | null = null;
  since = '0';
  readonly following = new Set<string>();
  readonly followsInFlight = new Map<string, number>();

  constructor(agent: LoadAgent) {
    // 503 is retried with the same key after Retry-After; a 429 comes back here, and the agent pauses.
    this.send = agoraFetch({ token: agent.token, retryOn: [503], maxAttempts: 3, maxWaitMs: 5000 });
  }
}

/** A JSON answer's body: each caller narrows the field it reads. */
type Answer = Record<string, unknown>;

export class Actors {
  private readonly actors: Actor[];
  private readonly recent: Written[] = [];
  private readonly world: LoadWorld;
  private readonly hot: number;
  private count = 0;

  constructor(world: LoadWorld, hot: number) {
    this.world = world;
    this.hot = hot;
    this.actors = world.agents.map((agent) => new Actor(agent));
  }

  /** An agent free to do `op` now, or null when every one tried is waiting out its rate class. */
  private free(op: Operation, now: number): Actor | null {
    const policy = rateClassOf[op];
    for (let tries = 0; tries < 8; tries++) {
      const actor = this.actors[Math.floor(Math.random() * this.actors.length)]!;
      if (!policy || (actor.pausedUntil.get(policy) ?? 0) <= now) return actor;
    }
    return null;
  }

  private project(): Written | { projectSlug: string; topicSlug: string } {
    const projects = this.world.projects;
    return Math.random() < this.hot ? projects[0]! : projects[Math.floor(Math.random() * projects.length)]!;
  }

  private async write(
    op: Operation,
    actor: Actor,
    path: string,
    body: Record<string, unknown>,
  ): Promise<{ sent: Sent; answer: Answer | null }> {
    const retryKey = newRetryKey();
    const sentAt = performance.now();
    const response = await actor.send(
      new Request(`${this.world.target}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': retryKey },
        body: JSON.stringify(body),
      }),
    );
    const text = await response.text();
    this.noteLimit(op, actor, response);
    return { sent: { op, status: response.status, sentAt, retryKey }, answer: response.ok && text ? (JSON.parse(text) as Answer) : null };
  }

  private async read(
    op: Operation,
    actor: Actor,
    path: string,
    etag: string | null,
  ): Promise<{ sent: Sent; answer: Answer | null; etag: string | null }> {
    const sentAt = performance.now();
    const response = await actor.send(new Request(`${this.world.target}${path}`, { headers: etag ? { 'if-none-match': etag } : {} }));
    const text = await response.text();
    this.noteLimit(op, actor, response);
    return {
      sent: { op, status: response.status, sentAt },
      answer: response.status === 200 && text ? (JSON.parse(text) as Answer) : null,
      etag: response.headers.get('etag'),
    };
  }

  /** Honours the service's limits: after a 429, or a write that used the agent's last unit, the agent waits as the fields say. */
  private noteLimit(op: Operation, actor: Actor, response: Response): void {
    const policy = parseRateLimit(response.headers)?.policy ?? rateClassOf[op];
    const seconds = response.status === 503 ? 0 : holdBackSeconds(response) || (response.status === 429 ? 1 : 0);
    if (policy && seconds > 0) actor.pausedUntil.set(policy, performance.now() + seconds * 1000);
  }

  /** Runs one operation; null when no agent may send now. */
  async act(asked: Operation): Promise<Sent | null> {
    const parent = this.recent[Math.floor(Math.random() * this.recent.length)];
    const op = !parent && (asked === 'reply' || asked === 'vote') ? 'post' : asked;
    const actor = this.free(op, performance.now());
    if (!actor) return null;
    switch (op) {
      case 'reply':
      case 'post': {
        const where = op === 'reply' ? parent! : this.project();
        const { sent, answer } = await this.write(op, actor, '/api/forum/posts', {
          action: 'create',
          projectSlug: where.projectSlug,
          topicSlug: where.topicSlug,
          body: `load ${++this.count}`,
          ...(op === 'reply' ? { parentPostId: parent!.id } : {}),
        });
        const post = answer?.post as Written | undefined;
        if (post)
          this.recent[this.recent.length < 500 ? this.recent.length : this.count % 500] = {
            id: post.id,
            projectSlug: post.projectSlug,
            topicSlug: post.topicSlug,
          };
        return sent;
      }
      case 'vote': {
        return (
          await this.write(op, actor, '/api/forum/votes', {
            action: 'cast',
            postId: parent!.id,
            value: Math.random() < 0.8 ? 'support' : 'contest',
          })
        ).sent;
      }
      case 'follow': {
        // Unfollow only what is known followed with nothing else in flight for it: an unfollow of what is not followed is a 404.
        const { projectSlug } = this.project();
        const busy = actor.followsInFlight.get(projectSlug) ?? 0;
        const follow = busy > 0 || !actor.following.has(projectSlug);
        actor.followsInFlight.set(projectSlug, busy + 1);
        const { sent, answer } = await this.write(op, actor, '/api/forum/follows', {
          action: follow ? 'follow' : 'unfollow',
          targetType: 'project',
          projectSlug,
        }).finally(() => actor.followsInFlight.set(projectSlug, (actor.followsInFlight.get(projectSlug) ?? 1) - 1));
        if (answer) answer.following ? actor.following.add(projectSlug) : actor.following.delete(projectSlug);
        return sent;
      }
      case 'feed': {
        const { sent, etag } = await this.read(op, actor, '/api/forum/feed?limit=20', actor.feedEtag);
        if (sent.status === 200) actor.feedEtag = etag;
        return sent;
      }
      case 'events': {
        const { sent, answer, etag } = await this.read(op, actor, `/api/forum/events?since=${actor.since}&limit=100`, actor.eventsEtag);
        const events = (answer?.events ?? []) as { eventId: string }[];
        if (sent.status === 200) actor.eventsEtag = events.length > 0 ? null : etag;
        if (events.length > 0) actor.since = events.at(-1)!.eventId;
        return sent;
      }
    }
  }
}
