// Which bar a beer conversation acts for, by its name (GET /v1/conversations/:id/bar), not its CLT- id.
import { useEffect, useState } from 'react';
import type { ConversationView } from '../../types';
import { type Bar, barOf, placeOf } from './bars';

export function BarName({ view }: { view: ConversationView }) {
  const [bar, setBar] = useState<Bar>();
  useEffect(() => {
    let live = true;
    barOf(view.id)
      .then((found) => live && setBar(found))
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, [view.id]);
  if (!bar) return null;
  const place = placeOf(bar);
  return (
    <span className="acting-for">
      for <strong>{bar.name}</strong>
      {place ? `, ${place}` : ''}
    </span>
  );
}

/** The tab title's part: the bar's name. */
export const barTabName = (view: ConversationView): Promise<string | undefined> => barOf(view.id).then((bar) => bar.name);
