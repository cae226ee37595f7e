// A choice among options (breweries) with a deadline: after it the agent goes on without an answer.
import { useState } from 'react';
import type { Card, PendingViewProps } from '../../agentHome';
import { BreweryCards } from './BreweryCards';
import { Countdown } from '../../Countdown';
import { useDecision } from '../../useDecision';
import { useNow } from '../../util';

export function ConfirmationCard({ item, onDecide }: PendingViewProps) {
  const { busy, error, run } = useDecision(onDecide);
  const options = item.options ?? [];
  const breweries = Array.isArray(item.details?.breweries) ? (item.details.breweries as Card[]) : [];
  const [choice, setChoice] = useState(options.length === 1 ? options[0]!.id : '');
  const now = useNow(500);
  const expired = item.expiresAt ? Date.parse(item.expiresAt) <= now : false;
  const headingId = `confirm-${item.id}`;
  return (
    <article className="pending-card confirmation" aria-labelledby={headingId}>
      {/* the time left stays in view (sticky) while the person reads the cards, on a phone too */}
      <div className="deadline">
        <Countdown expiresAt={item.expiresAt} label="Answer within" />
      </div>
      {/* what there is to choose from comes before the question: type, city, website, phone of each; on a phone
          one row that scrolls sideways, so the choice is on the same screen */}
      {breweries.length > 0 && <BreweryCards card={{ type: 'breweries', breweries }} strip />}
      <h2 id={headingId}>{item.prompt ?? 'Please confirm'}</h2>
      {expired && (
        <p role="status" className="banner">
          Time is up; the agent goes on without your choice.
        </p>
      )}
      {error && (
        <p role="alert" className="banner error">
          {error.message}
        </p>
      )}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (choice) run({ pendingId: item.id, decision: 'yes', choice });
        }}
      >
        {options.length > 0 && (
          <fieldset>
            <legend>Choose one</legend>
            <div className="options">
              {options.map((option) => (
                <label key={option.id} className={`option ${choice === option.id ? 'chosen' : ''}`}>
                  <input
                    type="radio"
                    name={`choice-${item.id}`}
                    value={option.id}
                    checked={choice === option.id}
                    onChange={() => setChoice(option.id)}
                  />
                  <span className="option-name">{option.name}</span>
                  <span className="muted">{[option.city, option.state].filter(Boolean).map(String).join(', ')}</span>
                </label>
              ))}
            </div>
          </fieldset>
        )}
        <div className="actions">
          <button type="submit" disabled={busy || expired || (options.length > 0 && !choice)}>
            Yes{choice ? `, ${options.find((o) => o.id === choice)?.name ?? ''}` : ''}
          </button>
          <button
            type="button"
            className="secondary"
            disabled={busy || expired}
            onClick={() => run({ pendingId: item.id, decision: 'no' })}
          >
            No
          </button>
        </div>
      </form>
    </article>
  );
}
