// The beer agent's tool implementations, by tool name, checked against its tool list (tools.ts).
import type { ToolImplementation, ToolImplementations } from '../../activities/tool-context.ts';
import { runAnalyticalQueryTool } from './analytics.ts';
import { beerFinderImplementations } from './finder.ts';
import { getClientProfileTool } from './profile.ts';
import { GET_CLIENT_PROFILE, RUN_ANALYTICAL_QUERY, type beerTools } from './tools.ts';

const implementations: ToolImplementations<typeof beerTools> = {
  [GET_CLIENT_PROFILE]: getClientProfileTool,
  ...beerFinderImplementations,
  [RUN_ANALYTICAL_QUERY]: runAnalyticalQueryTool,
};

/** The same, by any name (runTool looks a tool up by the name the model used). */
export const beerImplementations: Readonly<Record<string, ToolImplementation>> = implementations;
