import type { EntityManager } from '@mikro-orm/postgresql';
import { ANY_OF, insertRows, recordsOf, statement, textArray, type Statement } from '../../db/statements.ts';
import { Follow } from '../../entities/follow.ts';
import { notFound } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { Command } from '../../pipeline/command.ts';
import { presentFollow } from '../../views/follow.ts';
import { followEventDraft, followTarget, unfollowTarget, type FollowParams, type Target } from '../follows/followTarget.ts';
import { requireActor } from '../types.ts';
import { refusal, type Decision, type LoadedRows, type SetBasedHandler } from './types.ts';

const paramsOf = (command: Command) => command.data as unknown as FollowParams;
const followKey = (agentId: string, targetType: string, targetId: string) => `${agentId}|${targetType}|${targetId}`;

/** Targets and the followers' current follows of a run, one query per table. */
function reads(commands: Command[]): Record<string, Statement> {
  const projectSlugs = textArray(commands.map((c) => paramsOf(c).projectSlug));
  return {
    projects: statement(`select id, slug from project where slug = ${ANY_OF}`, [projectSlugs]),
    topics: statement(`select id, project_slug, slug from topic where project_slug = ${ANY_OF}`, [projectSlugs]),
    follows: statement(`select id, agent_id, target_type, target_id, project_slug, topic_slug, created_at from follow where agent_id = ${ANY_OF}`, [textArray(commands.map((c) => requireActor(c.actor).agentId))]),
  };
}

function stateOf(em: EntityManager, rows: LoadedRows) {
  const targets = new Map<string, Target>();
  for (const p of rows.projects as { id: string; slug: string }[]) targets.set(`project|${p.slug}`, { targetId: p.id, projectSlug: p.slug, topicSlug: null });
  for (const t of rows.topics as { id: string; project_slug: string; slug: string }[]) targets.set(`topic|${t.project_slug}/${t.slug}`, { targetId: t.id, projectSlug: t.project_slug, topicSlug: t.slug });
  const current = new Map<string, Follow>();
  for (const follow of recordsOf(em, Follow, rows.follows ?? [])) current.set(followKey(follow.agentId, follow.targetType, follow.targetId), follow);
  return { targets, current };
}

function targetOf(targets: Map<string, Target>, params: FollowParams): Target | undefined {
  return params.targetType === 'project' ? targets.get(`project|${params.projectSlug}`) : targets.get(`topic|${params.projectSlug}/${params.topicSlug ?? ''}`);
}

/**
 * follow.follow and follow.unfollow for a whole run: the rules of
 * followTarget and unfollowTarget (src/commands/follows/followTarget.ts)
 * folded in order over the loaded follows, so a follow and an unfollow of the
 * same target in one batch leave what the per-command path would.
 */
function followHandler(type: typeof followTarget.type | typeof unfollowTarget.type): SetBasedHandler {
  return {
    type,
    accepts: () => true,
    reads,
    decide(em, commands, rows, now) {
      const { targets, current } = stateOf(em, rows);
      const inserted = new Map<string, Follow>();
      const removed: string[] = [];
      const decisions = commands.map((command): Decision => {
        const params = paramsOf(command);
        const agentId = requireActor(command.actor).agentId;
        const target = targetOf(targets, params);
        if (!target) return refusal(command, notFound(params.targetType === 'project' ? `project ${params.projectSlug}` : `topic ${params.projectSlug}/${params.topicSlug ?? ''}`));
        const key = followKey(agentId, params.targetType, target.targetId);
        const existing = current.get(key);
        const touched = [`follows:${agentId}`];
        if (type === followTarget.type) {
          // Following again answers the existing follow and records nothing.
          if (existing) return { command, result: { status: 200, body: { follow: presentFollow(existing, params.view), following: true } }, outcome: 'applied', events: [], touched: [] };
          const follow: Follow = { id: newId('fol', now.getTime()), agentId, targetType: params.targetType, targetId: target.targetId, projectSlug: target.projectSlug, topicSlug: target.topicSlug, createdAt: now };
          current.set(key, follow);
          inserted.set(key, follow);
          return { command, result: { status: 200, body: { follow: presentFollow(follow, params.view), following: true } }, outcome: 'applied', events: [followEventDraft('follow.created', params.targetType, target)], touched };
        }
        if (!existing) return refusal(command, notFound(`a follow of this ${params.targetType}`));
        current.delete(key);
        if (!inserted.delete(key)) removed.push(existing.id);
        return { command, result: { status: 200, body: { follow: presentFollow(existing, params.view), following: false } }, outcome: 'applied', events: [followEventDraft('follow.removed', params.targetType, target)], touched };
      });
      const writes: Statement[] = [];
      if (inserted.size > 0) writes.push(insertRows(em, Follow, [...inserted.values()]));
      if (removed.length > 0) writes.push(statement(`delete from follow where id = ${ANY_OF}`, [textArray(removed)]));
      return { decisions, writes };
    },
  };
}

export const followTargets = followHandler(followTarget.type);
export const unfollowTargets = followHandler(unfollowTarget.type);
