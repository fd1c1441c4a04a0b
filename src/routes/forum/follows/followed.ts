import type { EntityManager } from '@mikro-orm/postgresql';
import { Follow } from '../../../entities/follow.ts';
import { findRows } from '../../../db/rows.ts';

/** What an agent follows, as the reads of followed activity (the feed, events?followed=true) take it. */
export interface Followed {
  /** Each followed project once, in the order followed. */
  projects: string[];
  /** Followed topics outside those projects: a followed topic of a followed project adds nothing, and would list its posts and events twice. */
  topics: Follow[];
}

/** An agent's follows from Postgres, split as Followed says. */
export async function readFollowed(em: EntityManager, agentId: string): Promise<Followed> {
  // In the index's order (agent, id): no sort in Postgres.
  const follows = await findRows(em, Follow, { agentId }, { orderBy: { id: 'asc' } });
  const projects = new Set(follows.filter((f) => f.targetType === 'project').map((f) => f.projectSlug));
  return { projects: [...projects], topics: follows.filter((f) => f.targetType === 'topic' && !projects.has(f.projectSlug)) };
}
