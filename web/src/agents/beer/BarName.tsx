// Which bar a beer conversation acts for, by its name (GET /v1/beer/clients/:clientId), not its CLT- id.
import { useEffect, useState } from 'react';
import { api } from '../../api';
import type { ConversationView } from '../../types';

export function BarName({ view }: { view: ConversationView }) {
  const client = typeof view.client === 'string' ? view.client : undefined;
  const [bar, setBar] = useState<{ name: string; city?: string | null; state?: string | null }>();
  useEffect(() => {
    if (!client) return;
    let live = true;
    api<{ name: string; city: string | null; state: string | null }>('GET', `/v1/beer/clients/${encodeURIComponent(client)}`)
      .then((found) => live && setBar(found))
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, [client]);
  if (!client) return null;
  return (
    <span className="acting-for">
      for <strong>{bar?.name ?? client}</strong>
      {bar?.city ? `, ${bar.city}${bar.state ? `, ${bar.state}` : ''}` : ''}
    </span>
  );
}
