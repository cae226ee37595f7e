// What activity factories are made from. Its own module, so an agent's activities can take it without
// importing the module that assembles every activity (which imports them: a cycle).
import type pg from 'pg';
import type { AgentCatalog } from '../shared/agent-catalog.ts';
import type { AgentSettings } from '../config.ts';
import type { OfflineAgents } from '../model/offline-types.ts';
import type { Config } from '../config.ts';
import type { TaskModel } from '../model/task-model.ts';
import type { ChatModel } from '../model/types.ts';
import type { AgentName } from '../shared/messages.ts';
import type { StopNotices } from './stop-notices.ts';
import type { StepHandoffs } from './step-handoff.ts';
import type { ApprovalPreview, ToolImplementation } from './tool-context.ts';

/** What activities read of the catalog; named here, not as ServerCatalog, whose AgentServer takes Services. */
export interface ActivityCatalog extends AgentCatalog, AgentSettings, OfflineAgents {
  readonly servers: readonly (OfflineAgents['servers'][number] & {
    activities?(services: Services): object;
    previews?: Readonly<Record<string, ApprovalPreview>>;
  })[];
}

export interface ActivityDeps {
  /** the agents served: their specs, and their child workflows' activities (a ServerCatalog is one) */
  catalog: ActivityCatalog;
  pool: pg.Pool;
  model: ChatModel;
  systemPrompt: (agent: AgentName) => Promise<string>;
  implementations: Record<string, ToolImplementation>;
  /** defaults to the settings of an empty environment */
  config?: Config;
  /** one-shot model calls (pipelines, SQL generation, grounding); defaults to the one the config selects */
  taskModel?: TaskModel;
  /** the worker's ear for Stop (a model step runs within its workflow task); without it only cancellation stops one */
  stops?: StopNotices;
  /** where a model step that outruns its workflow task goes on; without it, it runs to its end within the task */
  handoffs?: StepHandoffs;
}

/** What every activity factory gets: the deps with their defaults filled in. */
export type Services = Required<Omit<ActivityDeps, 'stops' | 'handoffs'>> & Pick<ActivityDeps, 'stops' | 'handoffs'>;
