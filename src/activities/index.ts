import type pg from 'pg';
import type { ChatModel } from '../model/types.ts';
import type { AgentName } from '../shared/messages.ts';
import type { ToolImplementation } from '../tools/types.ts';
import { createModelStep } from './model-step.ts';
import { createRecord } from './record.ts';
import { createRunTool } from './run-tool.ts';
import type { RuntimeActivities } from './runtime-types.ts';

export interface ActivityDeps {
  pool: pg.Pool;
  model: ChatModel;
  systemPrompt: (agent: AgentName) => Promise<string>;
  implementations: Record<string, ToolImplementation>;
}

export function createActivities(deps: ActivityDeps): RuntimeActivities {
  return {
    modelStep: createModelStep(deps),
    runTool: createRunTool(deps),
    record: createRecord(deps),
  };
}
