// The beer agent: breweries recommended for a bar, one chosen within a countdown, and its summary.
import type { AgentHome } from '../../agentHome';
import { BreweryCards } from './BreweryCards';
import { BrewerySummary } from './BrewerySummary';
import { ConfirmationCard } from './ConfirmationCard';

export const beer: AgentHome = {
  label: 'Beer',
  pendingKinds: { confirmation: { View: ConfirmationCard, label: 'Confirmation' } },
  cards: { breweries: BreweryCards, brewery_summary: BrewerySummary },
};
