import type { EntityManager } from '@mikro-orm/postgresql';
import { run } from './postgres.ts';
import { statement } from './statements.ts';

/*
 * Whose partition a command on an existing row runs in: the project of a
 * post, a review or an appeal, the requester of a relay case. Undefined
 * when there is no such row (the command then answers 404).
 */

async function firstValue(em: EntityManager, sql: string, id: string): Promise<string | undefined> {
  const [row] = await run<{ value: string }>(em, statement(sql, [id]));
  return row?.value;
}

export const postProject = (em: EntityManager, postId: string) =>
  firstValue(em, 'select project_slug as value from post where id = ?', postId);

export const reviewProject = (em: EntityManager, reviewId: string) =>
  firstValue(em, 'select project_slug as value from review_case where id = ?', reviewId);

export const appealProject = (em: EntityManager, appealId: string) =>
  firstValue(em, 'select project_slug as value from appeal where id = ?', appealId);

export const caseRequester = (em: EntityManager, reference: string) =>
  firstValue(em, 'select requester_handle as value from relay_case where reference = ?', reference);
