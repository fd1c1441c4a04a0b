import type { EntityManager } from '@mikro-orm/postgresql';
import { ANY_OF, distinct, insertRows, recordsOf, statement, type Statement } from '../../db/statements.ts';
import { Follow } from '../../entities/follow.ts';
import type { Command } from '../../pipeline/command.ts';
import { presentFollow } from '../../views/follow.ts';
import { defineHotCommand, type Decided, type LoadedRows } from '../hotCommand.ts';
import { requireActor, type EventDraft } from '../types.ts';
import { decideFollow, decideUnfollow, type FollowParams, type FollowState, type Target } from './followRules.ts';

const paramsOf = (command: Command) => command.data as unknown as FollowParams;
const followKey = (agentId: string, targetType: string, targetId: string) => `${agentId}|${targetType}|${targetId}`;

/** Targets and the followers' current follows of a run, one query per table. */
function reads(commands: Command[]): Record<string, Statement> {
  const projectSlugs = distinct(commands.map((c) => paramsOf(c).projectSlug));
  return {
    projects: statement(`select id, slug from project where slug = ${ANY_OF}`, [projectSlugs]),
    topics: statement(`select id, project_slug, slug from topic where project_slug = ${ANY_OF}`, [projectSlugs]),
    follows: statement(
      `select id, agent_id, target_type, target_id, project_slug, topic_slug, created_at from follow where agent_id = ${ANY_OF}`,
      [distinct(commands.map((c) => requireActor(c.actor).agentId))],
    ),
  };
}

/**
 * The run's targets by name, the current follows by follower and target, and
 * what the run changes: follows to insert and ids of follows to delete.
 */
function load(em: EntityManager, rows: LoadedRows) {
  const targets = new Map<string, Target>();
  for (const p of rows.projects as { id: string; slug: string }[])
    targets.set(`project|${p.slug}`, { targetId: p.id, projectSlug: p.slug, topicSlug: null });
  for (const t of rows.topics as { id: string; project_slug: string; slug: string }[])
    targets.set(`topic|${t.project_slug}/${t.slug}`, { targetId: t.id, projectSlug: t.project_slug, topicSlug: t.slug });
  const current = new Map<string, Follow>();
  for (const follow of recordsOf(em, Follow, rows.follows ?? []))
    current.set(followKey(follow.agentId, follow.targetType, follow.targetId), follow);
  return { targets, current, inserted: new Map<string, Follow>(), removed: [] as string[] };
}
type State = ReturnType<typeof load>;

/** One command's state in the deciders' shape, and the key its follow goes by in the run (unused when the target is missing: the decider refuses). */
function followStateOf(state: State, command: Command): { key: string; decided: FollowState } {
  const params = paramsOf(command);
  const agentId = requireActor(command.actor).agentId;
  const target =
    (params.targetType === 'project'
      ? state.targets.get(`project|${params.projectSlug}`)
      : state.targets.get(`topic|${params.projectSlug}/${params.topicSlug ?? ''}`)) ?? null;
  const key = target ? followKey(agentId, params.targetType, target.targetId) : '';
  return { key, decided: { target, follow: target ? (state.current.get(key) ?? null) : null } };
}

/** What a follow or an unfollow changes: the follow, under its key in the run. */
interface FollowChange {
  key: string;
  follow: Follow;
}

function writes(em: EntityManager, state: State): Statement[] {
  const statements: Statement[] = [];
  if (state.inserted.size > 0) statements.push(insertRows(em, Follow, [...state.inserted.values()]));
  if (state.removed.length > 0) statements.push(statement(`delete from follow where id = ${ANY_OF}`, [distinct(state.removed)]));
  return statements;
}

/** A follow created or removed: its change to the run, its answer, its event and the scopes it moves. */
function recorded(
  key: string,
  decision: { follow: Follow; event: EventDraft; touched: string[] },
  body: Record<string, unknown>,
): Decided<FollowChange> {
  return {
    kind: 'applied',
    change: { key, follow: decision.follow },
    body,
    events: [decision.event],
    touched: decision.touched,
    signals: [],
  };
}

/**
 * follow.follow: decideFollow (./followRules.ts) over the loaded follows, so
 * a follow and an unfollow of the same target in one batch leave what they
 * would one at a time. Following what is followed already changes nothing.
 */
export const followTarget = defineHotCommand<FollowParams, State, FollowChange>({
  type: 'follow.follow',
  errors: ['not_found'],
  accepts: () => true,
  reads,
  load,
  decide(state, command, now): Decided<FollowChange> {
    const { key, decided } = followStateOf(state, command);
    const decision = decideFollow(decided, paramsOf(command), requireActor(command.actor), now);
    if (decision.kind === 'refused') return decision;
    const body = { follow: presentFollow(decision.follow, command.view), following: true };
    if (decision.kind === 'unchanged') return { kind: 'applied', change: null, body, events: [], touched: [], signals: [] };
    return recorded(key, decision, body);
  },
  evolve(state, { key, follow }) {
    state.current.set(key, follow);
    state.inserted.set(key, follow);
  },
  writes,
});

/** follow.unfollow: decideUnfollow (./followRules.ts); a follow inserted earlier in the run is just not inserted. */
export const unfollowTarget = defineHotCommand<FollowParams, State, FollowChange>({
  type: 'follow.unfollow',
  errors: ['not_found'],
  accepts: () => true,
  reads,
  load,
  decide(state, command): Decided<FollowChange> {
    const { key, decided } = followStateOf(state, command);
    const decision = decideUnfollow(decided, paramsOf(command), requireActor(command.actor));
    if (decision.kind === 'refused') return decision;
    return recorded(key, decision, { follow: presentFollow(decision.follow, command.view), following: false });
  },
  evolve(state, { key, follow }) {
    state.current.delete(key);
    if (!state.inserted.delete(key)) state.removed.push(follow.id);
  },
  writes,
});
