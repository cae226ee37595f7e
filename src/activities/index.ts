import { loadConfig } from '../config.ts';
import { selectTaskModel } from '../model/select.ts';
import type { McpConnections } from '../mcp/connections.ts';
import { createMcpActivities } from './mcp.ts';
import { createModelStep } from './model-step.ts';
import { createPreviewCalls } from './approval-preview.ts';
import { createUsageMeter, meteredTaskModel } from './usage-meter.ts';
import { createRecord } from './record.ts';
import { createMoveLeaf } from './branch.ts';
import { createRunTool, runToolActivity } from './run-tool.ts';
import type { RuntimeActivities } from './runtime-types.ts';
import { createTitleConversation } from './title.ts';
import { createCompactConversation } from './compaction.ts';
import type { ActivityDeps, Services } from './services.ts';

export type { ActivityDeps, Services } from './services.ts';

export function createActivities(deps: ActivityDeps, mcp?: McpConnections) {
  const config = deps.config ?? loadConfig({}, deps.catalog);
  // Every one-shot model call is reserved and settled in the usage ledger, whoever makes it.
  const taskModel = meteredTaskModel(deps.taskModel ?? selectTaskModel(config, deps.catalog), createUsageMeter(deps.pool, config), config);
  const services: Services = { ...deps, config, taskModel };
  const runTool = createRunTool(services);
  const runtime: RuntimeActivities = {
    modelStep: createModelStep({ ...services, runTool, previewCalls: createPreviewCalls(services) }),
    runTool: runToolActivity(runTool),
    record: createRecord(services),
    moveLeaf: createMoveLeaf(services),
    titleConversation: createTitleConversation(services),
    compactConversation: createCompactConversation(services),
  };
  // Each agent's child-workflow activities join here, from the catalog.
  const agents = deps.catalog.servers.map((server) => server.activities?.(services) ?? {});
  const mcpActivities = createMcpActivities({ ...services, ...(mcp ? { mcp } : {}) });
  return Object.assign({}, ...agents, mcpActivities, runtime) as RuntimeActivities & Record<string, (...args: any[]) => Promise<unknown>>;
}
