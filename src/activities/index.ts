import type pg from 'pg';
import { type Config, loadConfig } from '../config.ts';
import { selectTaskModel } from '../model/select.ts';
import type { TaskModel } from '../model/task-model.ts';
import type { ChatModel } from '../model/types.ts';
import type { AgentName } from '../shared/messages.ts';
import type { ToolImplementation } from './tool-context.ts';
import { beerProfileSource, createBeerActivities } from '../agents/beer/activities.ts';
import { createModelStep } from './model-step.ts';
import { createRecipeActivities } from '../agents/recipes/activities.ts';
import { createRecord } from './record.ts';
import { createRunTool } from './run-tool.ts';
import type { RuntimeActivities } from './runtime-types.ts';

export interface ActivityDeps {
  pool: pg.Pool;
  model: ChatModel;
  systemPrompt: (agent: AgentName) => Promise<string>;
  implementations: Record<string, ToolImplementation>;
  /** defaults to the settings of an empty environment */
  config?: Config;
  /** one-shot model calls (pipelines, SQL generation, grounding); defaults to the one the config selects */
  taskModel?: TaskModel;
}

/** What every activity factory gets: the deps with their defaults filled in. */
export type Services = Required<ActivityDeps>;

export function createActivities(deps: ActivityDeps) {
  const config = deps.config ?? loadConfig({});
  const services: Services = { ...deps, config, taskModel: deps.taskModel ?? selectTaskModel(config) };
  const runTool = createRunTool(services);
  const runtime: RuntimeActivities = {
    modelStep: createModelStep({ ...services, runTool }),
    runTool,
    record: createRecord(services),
  };
  // Each agent's child-workflow activities join here, one spread per agent.
  return { ...runtime, ...createRecipeActivities(services), ...createBeerActivities(services, beerProfileSource) };
}
