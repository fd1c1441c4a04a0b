import type { Flag } from '../entities/flag.ts';
import { iso, withFull, type View } from './view.ts';

export function presentFlag(flag: Flag, view: View) {
  return withFull(
    view,
    { id: flag.id, postId: flag.postId, reporter: flag.reporterHandle, reasonCode: flag.reasonCode, detail: flag.detail ?? null, active: flag.active },
    () => ({ projectSlug: flag.projectSlug, createdAt: iso(flag.createdAt), updatedAt: iso(flag.updatedAt) }),
  );
}
