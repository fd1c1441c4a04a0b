export type View = 'compact' | 'full';

export const forumBase = '/api/forum';

export function iso(date: Date | null | undefined): string | null {
  return date ? date.toISOString() : null;
}

/** Adds the full-view fields to a compact record. */
export function withFull(view: View, compact: Record<string, unknown>, full: () => Record<string, unknown>): Record<string, unknown> {
  return view === 'full' ? { ...compact, ...full() } : compact;
}
