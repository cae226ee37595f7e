// Which bar a beer conversation acts for, by its name (GET /v1/conversations/:id/bar), not its CLT- id.
import { useEffect, useState } from 'react';
import { api } from '../../api';
import type { ConversationView } from '../../types';

export function BarName({ view }: { view: ConversationView }) {
  const [bar, setBar] = useState<{ name: string; city?: string | null; state?: string | null }>();
  useEffect(() => {
    let live = true;
    api<{ name: string; city: string | null; state: string | null }>('GET', `/v1/conversations/${encodeURIComponent(view.id)}/bar`)
      .then((found) => live && setBar(found))
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, [view.id]);
  if (!bar) return null;
  return (
    <span className="acting-for">
      for <strong>{bar.name}</strong>
      {bar.city ? `, ${bar.city}${bar.state ? `, ${bar.state}` : ''}` : ''}
    </span>
  );
}
