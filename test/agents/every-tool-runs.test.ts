// Every tool an agent declares can run: a tool the runTool activity runs has an implementation registered
// under its name, a tool run as a child workflow names a workflow the worker registers, and every
// registered implementation belongs to a declared tool. Each implementation is then called as the runtime
// calls it, with arguments generated from its own zod schema (made storable and parsed first, as the
// workflow does), inside a transaction as brigade_app: it must answer, not throw (a throw is an
// infrastructure failure that Temporal retries). Only the public registries are used (AGENT_SPECS,
// toolImplementations, the workflow bundle's exports), so the test follows the code wherever it moves.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import type pg from 'pg';
import { loadConfig } from '../../src/config.ts';
import { createPool, inTransaction } from '../../src/db/pool.ts';
import { createOfflineTaskModel } from '../../src/model/offline-tasks.ts';
import { AGENT_SPECS } from '../../src/agents/registry.ts';
import type { AgentName } from '../../src/shared/messages.ts';
import { storableJson } from '../../src/shared/safe-text.ts';
import { type ToolSpec, describeIssues } from '../../src/shared/tool-spec.ts';
import { toolImplementations } from '../../src/agents/server-registry.ts';
import type { ToolContext, ToolImplementation } from '../../src/activities/tool-context.ts';
import * as workflows from '../../src/workflows/index.ts';
import { type FakeOpenBreweryDb, startFakeOpenBreweryDb } from '../support/fake-openbrewerydb.ts';
import { freshDatabase } from '../support/harness.ts';
import { arbitraryFor } from '../support/schema-arbitrary.ts';

// ---- type level: the registry takes what the runtime hands it ------------------------------------------
// runTool (src/activities/run-tool.ts) calls `implementation(args, context)` with the schema's parsed output
// and a ToolContext, and stores what the promise gives. These fail to compile if the registry's shape
// drifts from that call.
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Expect<T extends true> = T;
type RegistryEntry = ReturnType<typeof toolImplementations>[string];
type _Context = Expect<Equal<Parameters<RegistryEntry>[1], ToolContext>>;
type _Result = Expect<Equal<ReturnType<RegistryEntry>, Promise<unknown>>>;
/** The call the runtime makes, typed from the spec: its schema's output goes to the implementation. */
function callAsRuntime<S extends ToolSpec['args']>(
  spec: ToolSpec<S>,
  implementation: RegistryEntry,
  args: ReturnType<S['parse']>,
  context: ToolContext,
): Promise<unknown> {
  return implementation(args, context);
}

const declared = (Object.keys(AGENT_SPECS) as AgentName[]).flatMap((agent) => AGENT_SPECS[agent].tools.map((spec) => ({ agent, spec })));
const runByActivity = declared.filter(({ spec }) => (spec.runner?.kind ?? 'activity') === 'activity');
const runByChild = declared.filter(({ spec }) => spec.runner?.kind === 'child');
const registry: Record<string, ToolImplementation | undefined> = toolImplementations();

describe('the tool registry', () => {
  test('every agent but the stateful one declares tools, each with an object schema', () => {
    for (const agent of Object.keys(AGENT_SPECS) as AgentName[]) {
      const spec = AGENT_SPECS[agent];
      if (spec.kernel) continue; // answers in JSON through its kernel, no tools
      assert.ok(spec.tools.length > 0, `${agent} declares no tools`);
    }
    for (const { agent, spec } of declared) {
      assert.equal(spec.args.def.type, 'object', `${agent}.${spec.name}: the model's function parameters are an object`);
    }
  });

  test('a tool name means one tool: the same spec wherever it is declared', () => {
    const byName = new Map<string, ToolSpec>();
    for (const { agent, spec } of declared) {
      const earlier = byName.get(spec.name);
      assert.ok(!earlier || earlier === spec, `${agent} declares another tool named ${spec.name}`);
      byName.set(spec.name, spec);
    }
  });

  test('every tool run by the runTool activity has an implementation registered under its name', () => {
    assert.ok(runByActivity.length > 0);
    const missing = runByActivity
      .filter(({ spec }) => typeof registry[spec.name] !== 'function')
      .map(({ agent, spec }) => `${agent}.${spec.name}`);
    assert.deepEqual(missing, []);
  });

  test('every tool run as a child workflow names a workflow the worker registers', () => {
    assert.ok(runByChild.length > 0);
    const exported = workflows as Record<string, unknown>;
    const missing = runByChild
      .filter(({ spec }) => spec.runner?.kind === 'child' && typeof exported[spec.runner.workflow] !== 'function')
      .map(({ agent, spec }) => `${agent}.${spec.name} -> ${spec.runner?.kind === 'child' ? spec.runner.workflow : ''}`);
    assert.deepEqual(missing, []);
    for (const { spec } of runByChild)
      assert.equal(registry[spec.name], undefined, `${spec.name} runs as a child workflow, not through runTool`);
  });

  test('every registered implementation belongs to a tool an agent declares', () => {
    const names = new Set(runByActivity.map(({ spec }) => spec.name));
    assert.deepEqual(
      Object.keys(toolImplementations).filter((name) => !names.has(name)),
      [],
    );
  });
});

describe('each implementation called with arguments from its schema', () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let pool: pg.Pool;
  let breweryDb: FakeOpenBreweryDb;
  let services: ToolContext['services'];
  let calls = 0;

  before(async () => {
    [database, breweryDb] = await Promise.all([freshDatabase(), startFakeOpenBreweryDb()]);
    pool = createPool(database.url);
    const config = loadConfig({ DATABASE_URL: database.url, OPENBREWERYDB_BASE_URL: breweryDb.baseUrl, SQL_STATEMENT_TIMEOUT: '2s' });
    services = { config, taskModel: createOfflineTaskModel(), pool };
  });
  after(async () => {
    await pool?.end();
    await database?.drop();
    await breweryDb?.close();
  });

  /** Argument sets the workflow would hand the tool: generated, made storable, accepted by the schema. */
  function argumentsFor(spec: ToolSpec, count: number): unknown[] {
    const valid: unknown[] = [];
    for (const candidate of fc.sample(arbitraryFor(spec.args), { numRuns: 400, seed: 18 })) {
      const parsed = spec.args.safeParse(storableJson(candidate));
      if (parsed.success) valid.push(parsed.data);
      if (valid.length === count) break;
    }
    return valid;
  }

  for (const { agent, spec } of runByActivity) {
    test(`${agent}.${spec.name}`, async () => {
      const implementation = registry[spec.name];
      assert.ok(implementation, `no implementation for ${spec.name}`);
      const sets = argumentsFor(spec, 4);
      assert.ok(sets.length > 0, `no generated arguments fit ${spec.name}'s schema`);
      for (const args of sets) {
        // the parse above is the workflow's; this re-check is what the type of callAsRuntime promises
        const checked = spec.args.safeParse(args);
        assert.ok(checked.success, checked.success ? '' : describeIssues(checked.error));
        calls += 1;
        const result = await inTransaction(pool, (db) =>
          callAsRuntime(spec, implementation, checked.data, {
            db,
            userId: 'registry-test',
            conversationId: 'conversation-registry-test',
            callId: `call-${calls}`,
            client: 'CLT-CCW784',
            services,
          }),
        ).catch((error: unknown) =>
          assert.fail(`${spec.name}(${JSON.stringify(args)}) threw: ${error instanceof Error ? error.stack : String(error)}`),
        );
        assert.notEqual(result, undefined, `${spec.name} answered nothing`);
        assert.doesNotThrow(() => JSON.stringify(result), `${spec.name}'s answer is JSON`);
      }
    });
  }
});
