/**
 * The layering rule, checked on every `npm test` (npm run lint:layers):
 * routes → http → commands → store / db → domain. Lower layers never import
 * upper ones; workers may use commands, never the HTTP tier; the SDK imports
 * nothing of the service.
 */
const lower = '^src/(commands|store|db|domain|entities|ledger|pipeline|views|crypto|logging|operator)/';
module.exports = {
  forbidden: [
    { name: 'lower-layers-never-import-http', severity: 'error', from: { path: lower }, to: { path: '^src/(http|routes|roles)/' } },
    {
      name: 'http-never-imports-routes',
      comment: 'assemble the server above both, in src/roles/',
      severity: 'error',
      from: { path: '^src/http/' },
      to: { path: '^src/(routes|roles)/' },
    },
    // pipeline/command.ts is the wire format of a command (types and codecs): every layer may name it.
    {
      name: 'store-and-db-never-import-commands',
      severity: 'error',
      from: { path: '^src/(store|db|entities|domain|crypto)/' },
      to: { path: '^src/(commands/|pipeline/(?!command\\.ts$))' },
    },
    {
      name: 'domain-imports-only-domain-entities-and-errors',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { path: '^src/(?!(domain|entities)/|errors\\.ts$)' },
    },
    {
      name: 'runtime-context-stays-low',
      severity: 'error',
      from: { path: '^src/(context|errors|ids|redis|failpoints)\\.ts$' },
      to: { path: '^src/(http|routes|roles|commands)/' },
    },
    { name: 'workers-never-import-http', severity: 'error', from: { path: '^workers/' }, to: { path: '^src/(http|routes)/' } },
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
