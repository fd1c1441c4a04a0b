// The normal path of follow.follow and follow.unfollow; the fallback is src/commands/follows/followTarget.ts, per command.
import type { EntityManager } from '@mikro-orm/postgresql';
import { ANY_OF, insertRows, recordsOf, statement, distinct, type Statement } from '../../db/statements.ts';
import { Follow } from '../../entities/follow.ts';
import type { Command } from '../../pipeline/command.ts';
import { presentFollow } from '../../views/follow.ts';
import { decideFollow, decideUnfollow, type FollowState, type Target } from '../follows/followRules.ts';
import { followTarget, unfollowTarget } from '../follows/followTarget.ts';
import type { FollowParams } from '../follows/followRules.ts';
import { requireActor } from '../types.ts';
import { refusal, type Decision, type LoadedRows, type SetBasedHandler } from './types.ts';

const paramsOf = (command: Command) => command.data as unknown as FollowParams;
const followKey = (agentId: string, targetType: string, targetId: string) => `${agentId}|${targetType}|${targetId}`;

/** Targets and the followers' current follows of a run, one query per table. */
function reads(commands: Command[]): Record<string, Statement> {
  const projectSlugs = distinct(commands.map((c) => paramsOf(c).projectSlug));
  return {
    projects: statement(`select id, slug from project where slug = ${ANY_OF}`, [projectSlugs]),
    topics: statement(`select id, project_slug, slug from topic where project_slug = ${ANY_OF}`, [projectSlugs]),
    follows: statement(`select id, agent_id, target_type, target_id, project_slug, topic_slug, created_at from follow where agent_id = ${ANY_OF}`, [distinct(commands.map((c) => requireActor(c.actor).agentId))]),
  };
}

/**
 * The run's targets by name, the current follows by follower and target, and
 * what the fold changes: follows to insert and ids of follows to delete.
 */
function stateOf(em: EntityManager, rows: LoadedRows) {
  const targets = new Map<string, Target>();
  for (const p of rows.projects as { id: string; slug: string }[]) targets.set(`project|${p.slug}`, { targetId: p.id, projectSlug: p.slug, topicSlug: null });
  for (const t of rows.topics as { id: string; project_slug: string; slug: string }[]) targets.set(`topic|${t.project_slug}/${t.slug}`, { targetId: t.id, projectSlug: t.project_slug, topicSlug: t.slug });
  const current = new Map<string, Follow>();
  for (const follow of recordsOf(em, Follow, rows.follows ?? [])) current.set(followKey(follow.agentId, follow.targetType, follow.targetId), follow);
  return { targets, current, inserted: new Map<string, Follow>(), removed: [] as string[] };
}
type State = ReturnType<typeof stateOf>;

/** One command's state in the deciders' shape, and the key its follow goes by in the fold (unused when the target is missing: the decider refuses). */
function followStateOf(state: State, params: FollowParams, agentId: string): { key: string; decided: FollowState } {
  const target = (params.targetType === 'project' ? state.targets.get(`project|${params.projectSlug}`) : state.targets.get(`topic|${params.projectSlug}/${params.topicSlug ?? ''}`)) ?? null;
  const key = target ? followKey(agentId, params.targetType, target.targetId) : '';
  return { key, decided: { target, follow: target ? (state.current.get(key) ?? null) : null } };
}

/** decideFollow for one command of the run: a new follow joins the current ones and the insert. */
function follow(state: State, command: Command, now: Date): Decision {
  const params = paramsOf(command);
  const follower = requireActor(command.actor);
  const { key, decided } = followStateOf(state, params, follower.agentId);
  const decision = decideFollow(decided, params, follower, now);
  if (decision.kind === 'refused') return refusal(command, decision.error);
  const result = { status: 200, body: { follow: presentFollow(decision.follow, command.view), following: true } };
  if (decision.kind === 'unchanged') return { command, result, outcome: 'applied', events: [], touched: [] };
  state.current.set(key, decision.follow);
  state.inserted.set(key, decision.follow);
  return { command, result, outcome: 'applied', events: [decision.event], touched: decision.touched };
}

/** decideUnfollow for one command of the run: a follow inserted by this run is just not inserted. */
function unfollow(state: State, command: Command): Decision {
  const params = paramsOf(command);
  const follower = requireActor(command.actor);
  const { key, decided } = followStateOf(state, params, follower.agentId);
  const decision = decideUnfollow(decided, params, follower);
  if (decision.kind === 'refused') return refusal(command, decision.error);
  state.current.delete(key);
  if (!state.inserted.delete(key)) state.removed.push(decision.follow.id);
  return { command, result: { status: 200, body: { follow: presentFollow(decision.follow, command.view), following: false } }, outcome: 'applied', events: [decision.event], touched: decision.touched };
}

/**
 * follow.follow and follow.unfollow for a whole run: decideFollow and
 * decideUnfollow (src/commands/follows/followRules.ts) folded in order over
 * the loaded follows, so a follow and an unfollow of the same target in one
 * batch leave what the per-command path would.
 */
function followHandler(type: typeof followTarget.type | typeof unfollowTarget.type): SetBasedHandler {
  return {
    type,
    accepts: () => true,
    reads,
    decide(em, commands, rows, now) {
      const state = stateOf(em, rows);
      const decisions = commands.map((command) => (type === followTarget.type ? follow(state, command, now) : unfollow(state, command)));
      const writes: Statement[] = [];
      if (state.inserted.size > 0) writes.push(insertRows(em, Follow, [...state.inserted.values()]));
      if (state.removed.length > 0) writes.push(statement(`delete from follow where id = ${ANY_OF}`, [distinct(state.removed)]));
      return { decisions, writes };
    },
  };
}

export const followTargets = followHandler(followTarget.type);
export const unfollowTargets = followHandler(unfollowTarget.type);
