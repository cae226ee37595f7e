// Generative UI the agents attach to messages: each card type is rendered by the agent home that claims it
// (agents/registry.ts); a type nobody claims shows as its JSON.
import type { Card } from './agentHome';
import { cardRendererFor } from './agents/registry';

export function Cards({ cards }: { cards: Card[] }) {
  return (
    <div className="cards">
      {cards.map((card, i) => {
        const Render = cardRendererFor(card.type);
        return Render ? (
          <Render key={i} card={card} />
        ) : (
          <details key={i} className="card unknown">
            <summary>{String(card.type ?? 'card')}</summary>
            <pre>{JSON.stringify(card, null, 2)}</pre>
          </details>
        );
      })}
    </div>
  );
}
