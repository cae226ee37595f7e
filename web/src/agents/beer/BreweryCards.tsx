// The breweries the agent recommends, one card each.
import type { Card } from '../../agentHome';

export function BreweryCards({ card }: { card: Card }) {
  const breweries = (card.breweries as Card[]) ?? [];
  return (
    <ul className="brewery-cards" aria-label="Breweries">
      {breweries.map((b, i) => (
        <li key={String(b.id ?? i)} className="card brewery-card">
          <h3>{String(b.name ?? 'Brewery')}</h3>
          <p className="muted">
            {[b.brewery_type ?? b.type, [b.city, b.state ?? b.state_province].filter(Boolean).join(', ')].filter(Boolean).join(' · ')}
          </p>
          {typeof b.website_url === 'string' && b.website_url && (
            <a href={b.website_url} target="_blank" rel="noreferrer">
              Website
            </a>
          )}
          {b.phone != null && <p className="muted">{String(b.phone)}</p>}
        </li>
      ))}
    </ul>
  );
}
