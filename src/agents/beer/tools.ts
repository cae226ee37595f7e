// The beer agent's tools, names and arguments as its contract fixes them (docs/agents/beer.md). The client a tool acts
// for is always the conversation's (from the token), whatever client_id the model passes: another one is
// refused, never looked up. The beer-finder tools (search_breweries_tool, get_website_summary_tool,
// recommend_breweries) join this same list.
import { z } from 'zod';
import { AUTO, defineTool } from '../../shared/tool-spec.ts';
import { beerFinderTools } from './finder-tool.ts';

export const GET_CLIENT_PROFILE = 'get_client_profile_tool';
export const RUN_ANALYTICAL_QUERY = 'run_analytical_query_tool';

export const ClientProfileArgs = z.object({
  // The contract makes client_id required; here it may be left out (the model is not told the id, and the
  // conversation's client is the only one it may name anyway): left out, it is the conversation's.
  client_id: z
    .string()
    .trim()
    .min(1, 'must name the client')
    .max(40)
    .optional()
    .describe(
      "The client's unique identifier (CLT-XXXXXX). Only the conversation's own client may be named; left out, it is the conversation's client",
    ),
  postal_code: z
    .string()
    .trim()
    .min(1)
    .max(20)
    .optional()
    .describe('Fallback: the postal code, used with client_name when the id finds nothing'),
  client_name: z.string().trim().min(1).max(200).optional().describe('Fallback: the client (bar) name, used with postal_code'),
});
export type ClientProfileArgs = z.infer<typeof ClientProfileArgs>;

export const clientProfileSpec = defineTool({
  name: GET_CLIENT_PROFILE,
  description:
    "Retrieve the client's profile from the database: name, city and state, postal code, top 3 brewery types, top 5 beers and top 3 breweries bought recently, and the full brewery history (every brewery bought from, to avoid recommending them again). Looks up by client_id, falling back to postal_code with client_name. Only the conversation's own client can be looked up.",
  args: ClientProfileArgs,
  policy: AUTO,
});

export const AnalyticalQueryArgs = z.object({
  question: z
    .string()
    .trim()
    .min(3, 'must be a question')
    .max(1000)
    .describe(
      'The analytical question in natural language, for example "How many Budweiser did I buy?" or "What is the best-selling beer in California?"',
    ),
});
export type AnalyticalQueryArgs = z.infer<typeof AnalyticalQueryArgs>;

export const analyticalQuerySpec = defineTool({
  name: RUN_ANALYTICAL_QUERY,
  description:
    "Answer an analytical or statistical question with a read-only SQL query written from the question. Allowed: the client's own purchases and profile, and aggregates across all clients (by beer, brewery, state, region, month; groups of fewer than 3 clients are hidden). Another client's data is never available.",
  args: AnalyticalQueryArgs,
  policy: AUTO,
});

/** The beer agent's tools; the brewery-finder tools are added to this list. */
export const beerTools = [clientProfileSpec, analyticalQuerySpec, ...beerFinderTools];
