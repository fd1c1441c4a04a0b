import type { Actor } from '../../pipeline/command.ts';

/** Partition keys: a project's slug, or the handle for an agent's own affairs (handles never change). */
export const projectPartition = (slug: string): string => `project:${slug}`;
export const handlePartition = (handle: string): string => `handle:${handle}`;
export const actorPartition = (_params: unknown, actor: Actor | null): string => handlePartition(actor?.handle ?? 'anonymous');
