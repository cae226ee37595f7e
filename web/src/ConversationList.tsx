import { useEffect, useState } from 'react';
import { ApiError, api, newIdempotencyKey } from './api';
import { agentLabel, clientPickerFor, startFor } from './agents/registry';
import { navigate } from './router';
import type { AgentName, ConversationSummary, ConversationView, Meta } from './types';

export function ConversationList({ meta, activeId, version, onCreated }: { meta?: Meta; activeId?: string; version: number; onCreated: (id: string) => void }) {
  const [items, setItems] = useState<ConversationSummary[]>();
  const [waiting, setWaiting] = useState<Record<string, boolean>>({});
  const [error, setError] = useState<string>();
  // pages after the first (GET /v1/conversations answers a page and nextCursor): the first page is reloaded
  // every 15 s, older pages only when asked for
  const [firstCursor, setFirstCursor] = useState<string | null>(null);
  const [older, setOlder] = useState<{ items: ConversationSummary[]; cursor: string | null }>({ items: [], cursor: null });
  const moreCursor = older.items.length ? older.cursor : firstCursor;
  const showOlder = async () => {
    if (!moreCursor) return;
    try {
      const page = await api<{ conversations: ConversationSummary[]; nextCursor: string | null }>('GET', `/v1/conversations?cursor=${encodeURIComponent(moreCursor)}`);
      setOlder((was) => ({ items: [...was.items, ...page.conversations], cursor: page.nextCursor }));
    } catch (e) {
      setError((e as ApiError).message);
    }
  };

  useEffect(() => {
    let stop = false;
    const load = async () => {
      try {
        const { conversations, nextCursor } = await api<{ conversations: ConversationSummary[]; nextCursor?: string | null }>('GET', '/v1/conversations');
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
        if (!stop) setError((e as ApiError).message);
      }
    };
    load();
    const timer = setInterval(load, 15_000);
    return () => {
      stop = true;
      clearInterval(timer);
    };
  }, [version]);

  return (
    <>
      <NewConversation meta={meta} onCreated={onCreated} />
      <h2 className="list-title">Your conversations</h2>
      {error && <p role="alert" className="banner error">{error}</p>}
      {!items ? (
        <p className="muted">Loading…</p>
      ) : items.length === 0 ? (
        <p className="muted">None yet.</p>
      ) : (
        <ul className="conversations">
          {[...items, ...older.items.filter((o) => !items.some((c) => c.id === o.id))].map((c) => (
            <li key={c.id}>
              <a
                href={`/c/${c.id}`}
                aria-current={c.id === activeId ? 'page' : undefined}
                onClick={(e) => {
                  e.preventDefault();
                  navigate(`/c/${c.id}`);
                }}
              >
                <span className={`agent-tag agent-${c.agent}`}>{agentLabel(c.agent)}</span>
                <span className="title">{c.title}</span>
                {waiting[c.id] && <span className="badge" aria-label="waiting for you">waiting for you</span>}
                <time dateTime={c.createdAt}>{new Date(c.createdAt).toLocaleString()}</time>
              </a>
            </li>
          ))}
        </ul>
      )}
      {items && moreCursor && (
        <button type="button" className="secondary" onClick={() => void showOlder()}>
          Show older conversations
        </button>
      )}
    </>
  );
}

function NewConversation({ meta, onCreated }: { meta?: Meta; onCreated: (id: string) => void }) {
  const allowed = meta?.agents.filter((a) => a.allowed) ?? [];
  const [agent, setAgent] = useState<AgentName | ''>('');
  const [title, setTitle] = useState('');
  const [client, setClient] = useState('');
  // per agent, so what was typed for one agent is still there after looking at another
  const [starts, setStarts] = useState<Record<string, Record<string, string>>>({});
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const chosen = agent || allowed[0]?.name || '';
  const info = meta?.agents.find((a) => a.name === chosen);
  const start = startFor(chosen);
  const ClientPicker = clientPickerFor(chosen);
  const startValues = starts[chosen] ?? {};

  return (
    <form
      className="new-conversation"
      aria-label="Start a conversation"
      onSubmit={async (e) => {
        e.preventDefault();
        if (!chosen) return;
        setBusy(true);
        setError(undefined);
        try {
          const created = await api<{ id: string }>(
            'POST',
            '/v1/conversations',
            {
              agent: chosen,
              ...(title.trim() ? { title: title.trim() } : {}),
              ...(info?.asksForClient && client.trim() ? { client: client.trim() } : {}),
              ...(start ? start.body(startValues) : {}),
            },
            { idempotencyKey: newIdempotencyKey() },
          );
          setTitle('');
          onCreated(created.id);
        } catch (err) {
          setError((err as ApiError).message);
        } finally {
          setBusy(false);
        }
      }}
    >
      <h2>New conversation</h2>
      <label htmlFor="new-agent">Agent</label>
      <select id="new-agent" value={chosen} onChange={(e) => setAgent(e.target.value as AgentName)} disabled={!meta}>
        {meta?.agents.map((a) => (
          <option key={a.name} value={a.name}>
            {agentLabel(a.name)}
            {a.allowed ? '' : ` (needs the "${a.requiredRole}" role)`}
          </option>
        ))}
      </select>
      {info?.asksForClient && info.allowed && ClientPicker && <ClientPicker value={client} onChange={setClient} />}
      {info?.asksForClient && info.allowed && !ClientPicker && (
        <>
          <label htmlFor="new-client">Client (the bar, e.g. CLT-…)</label>
          <input id="new-client" value={client} onChange={(e) => setClient(e.target.value)} placeholder="CLT-…" required />
        </>
      )}
      {start && <start.Fields values={startValues} onChange={(values) => setStarts((all) => ({ ...all, [chosen]: values }))} />}
      <label htmlFor="new-title">Title (optional)</label>
      <input id="new-title" value={title} maxLength={200} onChange={(e) => setTitle(e.target.value)} />
      {error && <p role="alert" className="field-error">{error}</p>}
      {meta && allowed.length === 0 && <p className="field-error">Your token may not use any agent.</p>}
      <button type="submit" disabled={busy || !chosen}>{busy ? 'Starting…' : 'Start'}</button>
    </form>
  );
}
