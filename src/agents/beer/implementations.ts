// The beer agent's tool implementations, by tool name (the specs are in src/shared/tools/beer.ts).
import { GET_CLIENT_PROFILE, RUN_ANALYTICAL_QUERY } from './tools.ts';
import type { ToolImplementation } from '../../activities/tool-context.ts';
import { beerFinderImplementations } from './finder.ts';
import { runAnalyticalQueryTool } from './analytics.ts';
import { getClientProfileTool } from './profile.ts';

export const beerImplementations: Record<string, ToolImplementation> = {
  [GET_CLIENT_PROFILE]: getClientProfileTool,
  ...beerFinderImplementations,
  [RUN_ANALYTICAL_QUERY]: runAnalyticalQueryTool,
};
