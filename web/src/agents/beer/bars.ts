// The bars as the API names them: the ones this token may act for (GET /v1/bars, for the picker), and the
// one a conversation acts for (GET /v1/conversations/:id/bar, for its header and its tab's title).
import type { z } from 'zod';
import type { BeerBarList, BeerClientView } from '../../../../src/agents/beer/client-routes.ts';
import { api } from '../../api';

export type Bar = z.infer<typeof BeerClientView>;

export const listBars = (): Promise<Bar[]> => api<z.infer<typeof BeerBarList>>('GET', '/v1/bars').then((list) => list.bars);

// A conversation's bar never changes: the header and the tab title share one request per conversation.
const barsOfConversations = new Map<string, Promise<Bar>>();

export function barOf(conversationId: string): Promise<Bar> {
  let bar = barsOfConversations.get(conversationId);
  if (!bar) {
    bar = api<Bar>('GET', `/v1/conversations/${encodeURIComponent(conversationId)}/bar`);
    // a failure (the API down a moment) is asked again next time, not remembered
    bar.catch(() => barsOfConversations.delete(conversationId));
    barsOfConversations.set(conversationId, bar);
  }
  return bar;
}

/** "San Diego, California", or what there is of it. */
export const placeOf = (bar: Bar): string => [bar.city, bar.state].filter(Boolean).join(', ');
