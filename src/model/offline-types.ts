// What an agent teaches the offline model (AgentServer.offline): its one-shot tasks, images and structured
// answers, and the phrasings its tools answer to. Types and constants only, so an agent's offline module
// and the offline model both import this and not each other.
import type { JsonObject } from '../shared/messages.ts';
import type { ModelRequest } from './types.ts';
import type { ImageReply, ImageRequest, TaskReply, TaskRequest } from './task-model.ts';

export const OFFLINE_NAME = 'offline';
/**
 * Once written before every offline reply; the web client now shows one "offline model" badge per
 * conversation instead (GET /v1/meta's model), so replies read as replies. Kept for the agents that import it.
 */
export const OFFLINE_PREFIX = '';

/** Answers a TaskRequest with text (JSON when the request has a schema). */
export type OfflineTask = (request: TaskRequest) => string | Omit<TaskReply, 'usage' | 'model'>;
/** Answers a chat turn whose reply must be JSON (ModelRequest.output), by the output's name. */
export type OfflineStructured = (request: ModelRequest) => string;
export type OfflineImage = (request: ImageRequest) => Omit<ImageReply, 'model'>;

/** Phrasings that call a tool, for the README and the offline model's help text. */
export interface OfflinePhrase {
  tool: string;
  examples: readonly string[];
}

/** A text the offline model turns into one call of `tool`, or undefined when the text is not one. */
export interface OfflineRule {
  tool: string;
  match(text: string): JsonObject | undefined;
  /**
   * Where the rule is tried among every agent's rules, lowest first (ties keep the catalog's order). The first
   * rule that matches decides, even when its tool is not the conversation's, so order across agents
   * matters: a recipe's text may say anything, and "find breweries in …" is not a customer lookup.
   */
  rank: number;
}

export interface AgentOffline {
  /** one-shot tasks by TaskRequest.task */
  tasks?: Readonly<Record<string, OfflineTask>>;
  /** image tasks by ImageRequest.task */
  images?: Readonly<Record<string, OfflineImage>>;
  /** the structured answer of a stateful agent (by its name) */
  structured?: OfflineStructured;
  phrases?: readonly OfflinePhrase[];
  rules?: readonly OfflineRule[];
  /** a plain reading of one of its tools' results, by tool name; undefined falls back to the result's shape */
  describe?: Readonly<Record<string, (value: unknown) => string | undefined>>;
}

/** What the offline model reads of the agents: their offline parts, in the catalog's order (a ServerCatalog is one). */
export interface OfflineAgents {
  readonly servers: readonly { readonly name: string; readonly offline?: AgentOffline }[];
}
