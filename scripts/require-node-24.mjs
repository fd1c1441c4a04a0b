// Loaded with `node --import` before any TypeScript: an older Node cannot even
// parse the .ts entry, so this plain module says so in one line and stops.
// It must stay syntax every Node since 18 understands.
export const REQUIRED_MAJOR = 24;

/** The one line to print for a Node version that cannot run Agora, or null when it can. */
export function nodeVersionProblem(version) {
  const major = Number(/^v?(\d+)/.exec(version)?.[1]);
  return major === REQUIRED_MAJOR ? null : `Agora needs Node ${REQUIRED_MAJOR}; this is ${version.replace(/^v/, '')}`;
}

const problem = nodeVersionProblem(process.env.AGORA_NODE_VERSION_FOR_TESTS || process.version);
if (problem) {
  console.error(problem);
  process.exit(1);
}
