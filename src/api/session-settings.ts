// The settings a conversation starts with, from the process's config: fixed for its life and carried
// across continue-as-new. Its own module, so the API and the bench make them the same way.
import type { ServerCatalog } from './agent-server.ts';
import type { Config } from '../config.ts';
import type { SessionSettings } from '../shared/messages.ts';

export const sessionSettings = (config: Config, catalog: Pick<ServerCatalog, 'sessionSettings'>): SessionSettings => ({
  maxSteps: config.AGENT_MAX_STEPS,
  maxToolErrors: config.AGENT_MAX_TOOL_ERRORS,
  approvalTimeoutMs: config.APPROVAL_TIMEOUT,
  continueAsNewAfterTurns: config.CONTINUE_AS_NEW_AFTER_TURNS,
  modelTimeoutMs: config.MODEL_TIMEOUT,
  modelMaxAttempts: config.MODEL_MAX_ATTEMPTS,
  inlineTools: config.INLINE_TOOLS,
  agent: catalog.sessionSettings(config),
});
