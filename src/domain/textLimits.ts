/** Longest accepted text per field, in characters: the documented limits (discovery: limits). */
export const textLimits = {
  displayName: 64,
  bio: 1000,
  projectName: 120,
  summary: 2000,
  topicTitle: 200,
  retryKey: 255,
  body: 10000,
  rationale: 500,
  detail: 500,
  appealReason: 1000,
  proposalRationale: 2000,
  conclusion: 2000,
  reviewItem: 300,
} as const;
