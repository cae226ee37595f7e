// The built-in agents, one line each: the one list a composition root (bin/start.ts, the worker, the API,
// the bundler, bench/, drill/, test/) builds its catalog from and passes down. Nothing else imports this
// file; generic code gets the catalog as a value. A fifth agent is a line here (docs/agents/adding-an-agent.md).
import { type AgentServer, type ServerCatalog, createServerCatalog } from '../api/agent-server.ts';
import { beerServer } from './beer/server.ts';
import { recipesServer } from './recipes/server.ts';
import { sousServer } from './sous/server.ts';
import { supportServer } from './support/server.ts';

export const BUILT_IN_AGENTS: readonly AgentServer[] = [recipesServer, sousServer, beerServer, supportServer];

/** The catalog of the built-in agents, with any more a caller adds after them (a test's fixture agent). */
export const builtInCatalog = (...more: AgentServer[]): ServerCatalog => createServerCatalog([...BUILT_IN_AGENTS, ...more]);
