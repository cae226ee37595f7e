// The person's conversations: the most recently active first, grouped by the day of their last activity,
// searched over titles and the person's own messages (by the server: GET /v1/conversations?q=), each a real
// link (Ctrl-click opens a new tab) with its agent and whether it waits for them.
import { useEffect, useMemo, useState } from 'react';
import { ApiError, api } from './api';
import { agentLabel } from './agents/registry';
import { useDeletion } from './deferredDelete';
import { followLink } from './router';
import type { ConversationSummary, ConversationView } from './types';

/** "Today", "Yesterday", or the date, in the reader's time zone. */
export function dayLabel(iso: string, now = new Date()): string {
  const day = new Date(iso);
  const start = (d: Date) => new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
  const days = Math.round((start(now) - start(day)) / 86_400_000);
  if (days === 0) return 'Today';
  if (days === 1) return 'Yesterday';
  return day.toLocaleDateString(undefined, {
    weekday: days < 7 ? 'long' : undefined,
    day: 'numeric',
    month: 'long',
    year: day.getFullYear() === now.getFullYear() ? undefined : 'numeric',
  });
}

export function ConversationList({ activeId, version, onOpen }: { activeId?: string; version: number; onOpen?: () => void }) {
  const [items, setItems] = useState<ConversationSummary[]>();
  const [waiting, setWaiting] = useState<Record<string, boolean>>({});
  const [error, setError] = useState<string>();
  const [query, setQuery] = useState('');
  // what the server found for the query (after a short pause in the typing), undefined while it looks
  const [found, setFound] = useState<{ query: string; items: ConversationSummary[] }>();
  const wanted = query.trim();
  // a conversation being deleted (Undo still offered) or just deleted is out of the list
  const deletion = useDeletion();
  // pages after the first (GET /v1/conversations answers a page and nextCursor): the first page is reloaded
  // every 15 s, older pages only when asked for
  const [firstCursor, setFirstCursor] = useState<string | null>(null);
  const [older, setOlder] = useState<{ items: ConversationSummary[]; cursor: string | null }>({ items: [], cursor: null });
  const moreCursor = older.items.length ? older.cursor : firstCursor;
  const showOlder = async () => {
    if (!moreCursor) return;
    try {
      const page = await api<{ conversations: ConversationSummary[]; nextCursor: string | null }>(
        'GET',
        `/v1/conversations?cursor=${encodeURIComponent(moreCursor)}`,
      );
      setOlder((was) => ({ items: [...was.items, ...page.conversations], cursor: page.nextCursor }));
    } catch (e) {
      setError((e as ApiError).message);
    }
  };

  useEffect(() => {
    let stop = false;
    const load = async () => {
      try {
        const { conversations, nextCursor } = await api<{ conversations: ConversationSummary[]; nextCursor?: string | null }>(
          'GET',
          '/v1/conversations',
        );
        if (stop) return;
        setItems(conversations);
        setFirstCursor(nextCursor ?? null);
        setError(undefined);
        // The list has no status: ask the newest conversations whether they wait for a person.
        const recent = conversations.slice(0, 15);
        const views = await Promise.allSettled(recent.map((c) => api<ConversationView>('GET', `/v1/conversations/${c.id}`)));
        if (stop) return;
        const next: Record<string, boolean> = {};
        views.forEach((v, i) => {
          if (v.status === 'fulfilled') next[recent[i]!.id] = v.value.pending.length > 0;
        });
        setWaiting(next);
      } catch (e) {
        // unreachable: the connection banner says so; the list keeps what it had
        if (!stop && (e as ApiError).status !== 0) setError((e as ApiError).message);
      }
    };
    load();
    const timer = setInterval(load, 15_000);
    return () => {
      stop = true;
      clearInterval(timer);
    };
  }, [version]);

  useEffect(() => {
    if (!wanted) return setFound(undefined);
    let stop = false;
    const timer = setTimeout(async () => {
      try {
        const page = await api<{ conversations: ConversationSummary[] }>('GET', `/v1/conversations?q=${encodeURIComponent(wanted)}`);
        if (!stop) setFound({ query: wanted, items: page.conversations });
      } catch (e) {
        if (!stop && (e as ApiError).status !== 0) setError((e as ApiError).message);
      }
    }, 250);
    return () => {
      stop = true;
      clearTimeout(timer);
    };
  }, [wanted, version]);

  const groups = useMemo(() => {
    const all = wanted ? (found?.items ?? []) : [...(items ?? []), ...older.items.filter((o) => !(items ?? []).some((c) => c.id === o.id))];
    const hidden = new Set([deletion.pending?.id, deletion.last?.outcome === 'deleted' ? deletion.last.id : undefined]);
    const byDay = new Map<string, ConversationSummary[]>();
    for (const c of all) {
      if (hidden.has(c.id)) continue;
      // an older server sends no lastActivityAt: its order (by creation) is kept
      const label = dayLabel(c.lastActivityAt ?? c.createdAt);
      byDay.set(label, [...(byDay.get(label) ?? []), c]);
    }
    return [...byDay.entries()];
  }, [items, older, wanted, found, deletion]);
  const searching = !!wanted && found?.query !== wanted;

  return (
    <>
      <a className="button new-link" href="/" onClick={(e) => followLink(e, '/', onOpen)}>
        New conversation
      </a>
      <label htmlFor="search-conversations" className="visually-hidden">
        Search conversations
      </label>
      <input
        id="search-conversations"
        type="search"
        placeholder="Search titles and messages"
        value={query}
        onChange={(e) => setQuery(e.target.value)}
      />
      {error && (
        <p role="alert" className="banner error">
          {error}
        </p>
      )}
      {!items ? (
        <p className="muted">Loading…</p>
      ) : items.length === 0 ? (
        <p className="muted">No conversations yet.</p>
      ) : searching && groups.length === 0 ? (
        <p className="muted" role="status">
          Searching…
        </p>
      ) : groups.length === 0 ? (
        <p className="muted" role="status">
          No conversation has “{wanted}” in its title or your messages.
        </p>
      ) : (
        groups.map(([day, conversations]) => (
          <section key={day} className="day" aria-label={day}>
            <h2 className="list-title">{day}</h2>
            <ul className="conversations">
              {conversations.map((c) => (
                <li key={c.id}>
                  <a
                    href={`/c/${c.id}`}
                    aria-current={c.id === activeId ? 'page' : undefined}
                    onClick={(e) => followLink(e, `/c/${c.id}`, onOpen)}
                  >
                    <span className={`agent-tag agent-${c.agent}`}>{agentLabel(c.agent)}</span>
                    <span className="title">{c.title}</span>
                    {wanted && c.match && <Found text={c.match} wanted={wanted} />}
                    {waiting[c.id] && <span className="badge">waiting for you</span>}
                  </a>
                </li>
              ))}
            </ul>
          </section>
        ))
      )}
      {items && moreCursor && !wanted && (
        <button type="button" className="secondary" onClick={() => void showOlder()}>
          Show older conversations
        </button>
      )}
    </>
  );
}

/** The words a search found, with the search marked in them (any case, as the server matched it). */
function Found({ text, wanted }: { text: string; wanted: string }) {
  const at = text.toLowerCase().indexOf(wanted.toLowerCase());
  return (
    <span className="match muted">
      {at < 0 ? (
        text
      ) : (
        <>
          {text.slice(0, at)}
          <mark>{text.slice(at, at + wanted.length)}</mark>
          {text.slice(at + wanted.length)}
        </>
      )}
    </span>
  );
}
