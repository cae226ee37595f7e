// What an agent adds to the server processes (the API and the worker), next to its AgentSpec: tool
// implementations, child-workflow activities, HTTP routes, create-conversation fields and settings. A
// composition root lists the agents' server sides (src/agents/catalog.ts for the built-in ones) and builds
// a ServerCatalog from them; generic code gets that value and never names an agent.
import type { Client } from '@temporalio/client';
import type { Router } from 'express';
import type pg from 'pg';
import type { z } from 'zod';
import type { Services } from '../activities/services.ts';
import type { ApprovalPreview, ToolImplementation } from '../activities/tool-context.ts';
import type { Principal } from './auth.ts';
import type { Config } from '../config.ts';
import type { AgentOffline } from '../model/offline-types.ts';
import type { PersonalDataKind } from '../protection/personal-data.ts';
import { type AgentCatalog, AgentCatalogError, createAgentCatalog } from '../shared/agent-catalog.ts';
import type { AgentSpec } from '../shared/agent-spec.ts';
import type { AgentName, JsonObject } from '../shared/messages.ts';
import type { ConversationAccess } from './conversation-access.ts';

export interface RouteDeps {
  config: Config;
  client: Client;
  pool: pg.Pool;
  /** the one ownership-and-role check every conversation route makes (src/api/conversation-access.ts) */
  access: ConversationAccess;
}

/** The parsed POST /v1/conversations body, with every agent's fields (each optional). */
export type CreateBody = { agent: AgentName; title?: string; client?: string } & Record<string, unknown>;

export interface CreateContext {
  pool: pg.Pool;
  principal: Principal;
  body: CreateBody;
}

export interface AgentServer<Name extends string = string> {
  name: Name;
  /** what every process knows of it, the workflow included */
  spec: AgentSpec<Name>;
  /**
   * the modules the workflow bundle's generated entry imports (stack/bundle-workflows.ts): its spec
   * module and the name it exports the spec under, and the module exporting its child workflows, whose
   * exported names are workflow types in recorded histories (never rename one)
   */
  bundle: { spec: URL; specExport: string; workflows?: URL };
  /** its process settings (environment variables), read and checked with the runtime's at start (src/config.ts) */
  config?: z.ZodRawShape;
  /** the folder of its SQL migrations, collected by the migrator in the global order of their file names */
  migrations?: URL;
  /** its tools' implementations, by tool name (typed from its tool list: ToolImplementations) */
  implementations?: Readonly<Record<string, ToolImplementation>>;
  /**
   * read-only lookups of what an approval would touch, by tool name (a tool that needs approval): run by the
   * model step before the item opens, shown with it as PendingItem.preview
   */
  previews?: Readonly<Record<string, ApprovalPreview>>;
  /** its child workflows' activities (the names are part of recorded histories: never rename one) */
  activities?(services: Services): object;
  /** its routes, mounted under /v1 after the generic ones */
  routes?(deps: RouteDeps): Router;
  /**
   * files of the local object store that browsers load without a bearer token (an <img>), under
   * /files/<prefix>/<name>: only names the pattern accepts, only while isLive says their owner still wants
   * them shown, and never cached for good (a deletion must take effect)
   */
  publicFiles?: {
    prefix: string;
    name: RegExp;
    contentType: string;
    isLive(pool: pg.Pool, name: string): Promise<boolean>;
  };
  /** what POST /v1/conversations takes and does for it */
  create?: {
    /** body fields only this agent takes; given for another agent, each is refused ("only for the X agent") */
    fields?: z.ZodRawShape;
    /** checks across fields, run on every body */
    check?(body: CreateBody, ctx: z.RefinementCtx): void;
    /** may the caller open it (beyond the spec's requiredRole)? throws an HttpError when not */
    authorize?(ctx: CreateContext): Promise<void>;
    /** ChatSessionInput.init: where the conversation starts from */
    init?(ctx: CreateContext): Promise<JsonObject | undefined>;
  };
  /** the fields its kernel's view adds to GET /v1/conversations/:id (documented in the OpenAPI document) */
  view?: z.ZodObject;
  /** what the offline model (no GEMINI_API_KEY) knows of it: tasks, phrasings, readings of its results */
  offline?: AgentOffline;
  /** the folder of its prompts (system.txt, task prompts), when not prompts/<name>/ (a test agent's) */
  prompts?: URL;
  /** what a worker does once at start for it, before it polls (database settings its tools read) */
  onWorkerStart?(deps: { config: Config; pool: pg.Pool }): Promise<void>;
  /** what it keeps of a user beyond conversations (saved recipes): exported by GET /v1/me/export, erased by DELETE /v1/me */
  personalData?: PersonalDataKind[];
  /** agent-specific durations for SessionSettings.agent, read by its child workflows */
  settings?(config: Config): Record<string, number>;
  /** its part of the OpenAPI document */
  openapi?: {
    /** response bodies (and other output shapes) by component name */
    schemas?: Record<string, z.ZodType>;
    /** request bodies by component name */
    inputs?: Record<string, z.ZodType>;
    paths?(helpers: OpenApiHelpers): Record<string, unknown>;
  };
}

/** What openapi.ts hands an agent to describe its paths with the document's own conventions. */
export interface OpenApiHelpers {
  /** a JSON response of the named component */
  json(description: string, ref: string): unknown;
  /** the error responses of these statuses */
  errors(...codes: number[]): Record<string, unknown>;
  /** the conversation id path parameter */
  idParam: unknown;
  /** a zod schema as JSON Schema */
  schema(type: z.ZodType, io?: 'input' | 'output'): Record<string, unknown>;
}

export const defineAgentServer = <const Name extends string>(server: AgentServer<Name>): AgentServer<Name> => server;

/** The catalog of a server process: the agents' specs (AgentCatalog) and their server sides. */
export interface ServerCatalog extends AgentCatalog {
  readonly servers: readonly AgentServer[];
  server(name: string): AgentServer | undefined;
  /** every tool the worker can run, by name; the specs say which agent may call which */
  toolImplementations(): Record<string, ToolImplementation>;
  /** every agent's process settings, for loadConfig */
  configShape(): z.ZodRawShape;
  /** SessionSettings.agent: every agent's durations (a conversation carries them all) */
  sessionSettings(config: Config): Record<string, number>;
  /** runs every agent's onWorkerStart, once per worker */
  startForWorker(deps: { config: Config; pool: pg.Pool }): Promise<void>;
}

export function createServerCatalog(servers: readonly AgentServer[]): ServerCatalog {
  for (const server of servers)
    if (server.spec.name !== server.name)
      throw new AgentCatalogError(`Agent server "${server.name}" carries the spec of "${server.spec.name}"`);
  const specs = createAgentCatalog(servers.map((server) => server.spec));
  const settingNames = new Map<string, string>();
  for (const server of servers)
    for (const name of Object.keys(server.config ?? {})) {
      const owner = settingNames.get(name);
      if (owner) throw new AgentCatalogError(`Setting ${name} of agent "${server.name}" is agent "${owner}"'s`);
      settingNames.set(name, server.name);
    }
  const byName = new Map(servers.map((server) => [server.name, server]));
  return {
    ...specs,
    servers: [...servers],
    server: (name) => byName.get(name),
    toolImplementations: () => Object.assign({}, ...servers.map((server) => server.implementations ?? {})),
    configShape: () => Object.assign({}, ...servers.map((server) => server.config ?? {})),
    sessionSettings: (config) => Object.assign({}, ...servers.map((server) => server.settings?.(config) ?? {})),
    async startForWorker(deps) {
      for (const server of servers) await server.onWorkerStart?.(deps);
    },
  };
}
