/**
 * The layering, checked on every `npm test` (npm run lint:layers). The
 * service is a stack of floors, listed from the bottom: a module imports
 * modules of its own place or of a floor below, never of a floor above, nor
 * of another place on its own floor, and no import comes back round to
 * where it started (no-circular, type-only imports included). The floors
 * follow the import graph (`npx depcruise src workers config --config
 * .dependency-cruiser.cjs --output-type text`): configuration; what every
 * layer may use (errors, ids, logging, tracing); entities and pure rules;
 * the ports to Postgres and Redis; the ledger; views; the queue pipeline;
 * Redis stores and what operators read; commands; the HTTP tier and the
 * workers; routes; the roles that assemble them; the process entry points.
 * A new file outside every place fails until it is given a floor. The SDK
 * imports nothing of the service.
 */
const floors = [
  ['config'],
  ['src/errors.ts', 'src/ids.ts', 'src/failpoints.ts', 'src/settle.ts', 'src/logging', 'src/tracing'],
  ['src/entities'],
  ['src/domain'],
  ['src/db', 'src/redis.ts'],
  ['src/crypto', 'src/ledger'],
  ['src/views'],
  ['src/pipeline'],
  ['src/store', 'src/operator'],
  ['src/commands', 'src/context.ts'],
  ['src/http', 'workers'],
  ['src/routes'],
  ['src/roles'],
  ['src/app.ts', 'src/supervisor.ts'],
  ['src/bin'],
];

const pattern = (place) => (place.endsWith('.ts') ? `^${place.replaceAll('.', '\\.')}$` : `^${place}/`);
const anyOf = (places) => places.map(pattern).join('|');

const upward = floors.slice(0, -1).map((places, floor) => ({
  name: `floor-${floor}-never-imports-up`,
  comment: `${places.join(', ')} may not import a floor above theirs`,
  severity: 'error',
  from: { path: anyOf(places) },
  to: { path: anyOf(floors.slice(floor + 1).flat()) },
}));

const sideways = floors.flatMap((places) =>
  places.length < 2
    ? []
    : places.map((place) => ({
        name: `${place}-never-imports-its-floor-siblings`,
        severity: 'error',
        from: { path: pattern(place) },
        to: { path: anyOf(places.filter((other) => other !== place)) },
      })),
);

module.exports = {
  forbidden: [
    ...upward,
    ...sideways,
    {
      name: 'every-module-has-a-floor',
      comment: 'add the new place to the floors of .dependency-cruiser.cjs',
      severity: 'error',
      from: { path: '^(src|workers|config)/' },
      to: { path: '^(src|workers|config)/', pathNot: anyOf(floors.flat()) },
    },
    { name: 'no-circular', severity: 'error', from: {}, to: { circular: true } },
    {
      name: 'domain-imports-only-domain-entities-and-errors',
      comment: 'pure rules: no engine, no logging, nothing of the runtime',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { path: '^src/(?!(domain|entities)/|errors\\.ts$)' },
    },
    {
      name: 'sdk-imports-nothing-of-the-service',
      severity: 'error',
      from: { path: '^sdk/' },
      to: { path: '^(src|workers|config|scripts)/' },
    },
    {
      name: 'service-never-imports-tests-or-benches',
      severity: 'error',
      from: { path: '^(src|workers|config)/' },
      to: { path: '^(test|bench|scripts)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    parser: 'swc',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^(node_modules|sdk/src/generated)/' },
  },
};
