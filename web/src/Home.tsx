// The home page: each agent as a tile (what it does, in its home's words, and a first thing to ask), and
// the form that starts a conversation with the fields only some agents ask for (a bar, a recipe).
import { useRef, useState } from 'react';
import { ApiError, api, newIdempotencyKey } from './api';
import { agentLabel, clientPickerFor, startFor, tileFor } from './agents/registry';
import type { AgentName, Meta } from './types';

export type OnCreated = (id: string, firstMessage?: string) => void;

export function Home({ meta, onCreated, notice }: { meta?: Meta; onCreated: OnCreated; notice?: string }) {
  const [agent, setAgent] = useState<AgentName | ''>('');
  const [prompt, setPrompt] = useState<string>();
  const [busy, setBusy] = useState<string>();
  const [error, setError] = useState<string>();
  const form = useRef<HTMLFormElement>(null);

  /** An agent that asks for nothing more starts at once; one that does opens the form, chosen. */
  const choose = async (name: AgentName, ask?: string) => {
    const info = meta?.agents.find((a) => a.name === name);
    if (info?.asksForClient || startFor(name)) {
      setAgent(name);
      setPrompt(ask);
      requestAnimationFrame(() => {
        form.current?.scrollIntoView({ block: 'start', behavior: 'smooth' });
        form.current?.querySelector<HTMLElement>('select:not(#new-agent), input')?.focus({ preventScroll: true });
      });
      return;
    }
    setBusy(name);
    setError(undefined);
    try {
      const created = await api<{ id: string }>('POST', '/v1/conversations', { agent: name }, { idempotencyKey: newIdempotencyKey() });
      onCreated(created.id, ask);
    } catch (e) {
      setError((e as ApiError).message);
    } finally {
      setBusy(undefined);
    }
  };

  return (
    <div className="home">
      {notice && (
        <p role="status" className="banner">
          {notice}
        </p>
      )}
      <h1 id="home-title">What would you like to do{meta ? `, ${meta.user}` : ''}?</h1>
      {error && (
        <p role="alert" className="banner error">
          {error}
        </p>
      )}
      <ul className="tiles" aria-labelledby="home-title">
        {meta?.agents.map((a) => {
          const tile = tileFor(a.name);
          if (!tile) return null;
          return (
            <li key={a.name}>
              <article className={`tile agent-${a.name}`} aria-labelledby={`tile-${a.name}`}>
                <h2 id={`tile-${a.name}`}>{tile.label}</h2>
                <p>{tile.description}</p>
                {a.allowed ? (
                  <div className="tile-actions">
                    {tile.firstPrompt && (
                      <button type="button" className="secondary prompt" disabled={!!busy} onClick={() => choose(a.name, tile.firstPrompt)}>
                        Ask “{tile.firstPrompt}”
                      </button>
                    )}
                    <button
                      type="button"
                      disabled={!!busy}
                      onClick={() => choose(a.name)}
                      aria-label={`Start a conversation with ${tile.label}`}
                    >
                      {busy === a.name ? 'Starting…' : 'Start'}
                    </button>
                  </div>
                ) : (
                  <p className="muted">Your sign-in may not use this agent (it needs the “{a.requiredRole}” role).</p>
                )}
              </article>
            </li>
          );
        })}
      </ul>
      <NewConversation
        meta={meta}
        formRef={form}
        agent={agent}
        onAgent={(name) => {
          setAgent(name);
          setPrompt(undefined);
        }}
        prompt={prompt}
        onCreated={onCreated}
      />
    </div>
  );
}

function NewConversation({
  meta,
  formRef,
  agent,
  onAgent,
  prompt,
  onCreated,
}: {
  meta?: Meta;
  formRef: React.RefObject<HTMLFormElement | null>;
  agent: AgentName | '';
  onAgent: (agent: AgentName) => void;
  prompt?: string;
  onCreated: OnCreated;
}) {
  const allowed = meta?.agents.filter((a) => a.allowed) ?? [];
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
      ref={formRef}
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
          onCreated(created.id, prompt);
        } catch (err) {
          setError((err as ApiError).message);
        } finally {
          setBusy(false);
        }
      }}
    >
      <h2>Start a conversation</h2>
      <label htmlFor="new-agent">Agent</label>
      <select id="new-agent" value={chosen} onChange={(e) => onAgent(e.target.value as AgentName)} disabled={!meta}>
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
          <label htmlFor="new-client">Client</label>
          <input id="new-client" value={client} onChange={(e) => setClient(e.target.value)} required />
        </>
      )}
      {start && <start.Fields values={startValues} onChange={(values) => setStarts((all) => ({ ...all, [chosen]: values }))} />}
      <label htmlFor="new-title">Title (optional)</label>
      <input
        id="new-title"
        value={title}
        maxLength={200}
        placeholder="Made from your first message if left empty"
        onChange={(e) => setTitle(e.target.value)}
      />
      {prompt && <p className="hint">Then asks: “{prompt}”</p>}
      {error && (
        <p role="alert" className="field-error">
          {error}
        </p>
      )}
      {meta && allowed.length === 0 && <p className="field-error">Your sign-in may not use any agent.</p>}
      <button type="submit" disabled={busy || !chosen}>
        {busy ? 'Starting…' : 'Start'}
      </button>
    </form>
  );
}
