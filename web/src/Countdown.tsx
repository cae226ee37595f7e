// A deadline counting down. Its own module so that any pending view (generic or an agent's) can show one
// without importing the panel that lists the views.
import { formatRemaining, useNow } from './util';

export function Countdown({ expiresAt, label = 'Time left' }: { expiresAt?: string; label?: string }) {
  const now = useNow(250);
  if (!expiresAt) return null;
  const left = Date.parse(expiresAt) - now;
  const urgent = left < 10_000;
  return (
    <p className={`countdown ${urgent ? 'urgent' : ''}`}>
      {label}:{' '}
      <strong aria-live={urgent ? 'assertive' : 'off'} data-testid="countdown">
        {formatRemaining(left)}
      </strong>
      <span className="visually-hidden"> (until {new Date(expiresAt).toLocaleTimeString()})</span>
    </p>
  );
}
