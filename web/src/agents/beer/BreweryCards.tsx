// The breweries the agent recommends, one card each.
import type { Card } from '../../agentHome';
import { PhoneLink } from '../../resultParts';

// what OpenBreweryDB left out reads "Unavailable" in the result: on a card it is left out
const shown = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() && value !== 'Unavailable' ? value : undefined;

/**
 * `strip`: on a narrow screen the cards are one row that scrolls sideways in its own box (styles.css), so what
 * follows them (a choice with a deadline) is not a screen or two further down; the row takes the focus, so a
 * keyboard scrolls it too.
 */
export function BreweryCards({ card, strip = false }: { card: Card; strip?: boolean }) {
  const breweries = (card.breweries as Card[]) ?? [];
  return (
    <ul className={`brewery-cards${strip ? ' strip' : ''}`} aria-label="Breweries" {...(strip ? { tabIndex: 0 } : {})}>
      {breweries.map((b, i) => (
        <li key={String(b.id ?? i)} className="card brewery-card">
          <h3>{String(b.name ?? 'Brewery')}</h3>
          <p className="muted">
            {[b.brewery_type ?? b.type, [b.city, b.state ?? b.state_province].filter(Boolean).join(', ')].filter(Boolean).join(' · ')}
          </p>
          {shown(b.website_url) && /^https?:\/\//i.test(String(b.website_url)) && (
            <a href={String(b.website_url)} target="_blank" rel="noreferrer">
              Website
            </a>
          )}
          {shown(b.phone) && (
            <p className="muted">
              Phone: <PhoneLink phone={String(b.phone)} />
            </p>
          )}
        </li>
      ))}
    </ul>
  );
}
