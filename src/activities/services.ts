// What activity factories are made from. Its own module, so an agent's activities can take it without
// importing the module that assembles every activity (which imports them: a cycle).
import type pg from 'pg';
import type { Config } from '../config.ts';
import type { TaskModel } from '../model/task-model.ts';
import type { ChatModel } from '../model/types.ts';
import type { AgentName } from '../shared/messages.ts';
import type { ToolImplementation } from './tool-context.ts';

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
