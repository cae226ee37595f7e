// The beer agent: a bar's purchases (profile, analytical SQL) and brewery recommendations through the
// breweryRecommendation child workflow, always for the conversation's client.
import { defineAgent } from '../../shared/agent-spec.ts';
import { beerTools } from './tools.ts';

/** A token without a client needs this role to open a beer conversation, naming the client (issue 8). */
export const BEER_STAFF_ROLE = 'beer-staff';

export const beerAgent = defineAgent({ name: 'beer', tools: beerTools, clientRole: BEER_STAFF_ROLE });
