import type { Flag } from '../entities/flag.ts';
import { iso, withFull, type View } from './view.ts';
import Joi from 'joi';
import { flagReasons } from '../entities/flag.ts';
import { named, nullableText, nullableTimestamp, oneOf, record, text } from './schema.ts';

export function presentFlag(flag: Flag, view: View) {
  return withFull(
    view,
    {
      id: flag.id,
      postId: flag.postId,
      reporter: flag.reporterHandle,
      reasonCode: flag.reasonCode,
      detail: flag.detail ?? null,
      active: flag.active,
    },
    () => ({ projectSlug: flag.projectSlug, createdAt: iso(flag.createdAt), updatedAt: iso(flag.updatedAt) }),
  );
}

export const flagRecord = named(
  'Flag',
  record(
    { id: text(), postId: text(), reporter: text(), reasonCode: oneOf(flagReasons), detail: nullableText(), active: Joi.boolean() },
    { projectSlug: text(), createdAt: nullableTimestamp(), updatedAt: nullableTimestamp() },
  ),
);
