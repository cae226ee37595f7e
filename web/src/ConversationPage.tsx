import { Fragment, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { ApiError, api, newIdempotencyKey } from './api';
import { agentLabel, examplesFor, REFRESH_EVENTS, sidePanelFor, subtitleFor, tabNameFor } from './agents/registry';
import { compose, onCompose } from './compose';
import { openEventStream, type StreamStatus } from './events';
import { MessageRow, DraftRow, PendingRecord } from './Messages';
import type { MessageActionsValue } from './MessageActions';
import { versionRows } from './versions';
import { branchOrder } from './branchPath';
import { PendingPanel } from './Pending';
import { pendingKind } from './pendingKinds';
import { ProgressList } from './Progress';
import { TryAgain, failedTurnText, failuresSaid } from './TryAgain';
import { UsagePanel } from './UsagePanel';
import { ConversationActions, RenameForm } from './ConversationActions';
import { McpTools } from './McpTools';
import { ContextFold } from './ContextFold';
import { outbox } from './outbox';
import { useNarrow } from './useNarrow';
import { addMessages, applyEvent, emptyTranscript, type Transcript } from './transcript';
import type { ConversationView, Meta, StreamEvent, TurnResult } from './types';
import { navigate } from './router';
import { drafts } from './util';
import { useFollow } from './useFollow';

/** Events after which the server's view (status, pending items, usage, agent state) has changed. */
// `progress`: a tool runs after an approval, which no longer waits (another tab that approved, a reload).
const REFRESH_ON = new Set([
  'pending.opened',
  'pending.closed',
  'turn.ended',
  'turn.started',
  'usage',
  'state.changed',
  ...REFRESH_EVENTS,
  'message',
  'turn.stopped',
  'progress',
  'title.changed',
  'branch.changed',
]);

export function ConversationPage({
  id,
  meta,
  onChanged,
  onDeleted,
  justStarted,
}: {
  id: string;
  meta?: Meta;
  onChanged: () => void;
  onDeleted: (title: string) => void;
  /** opened by its Start: the person writes next, so the composer takes the focus once it is there */
  justStarted?: boolean;
}) {
  const [view, setView] = useState<ConversationView>();
  const [transcript, setTranscript] = useState<Transcript>(emptyTranscript);
  const [stream, setStream] = useState<StreamStatus>('connecting');
  const [error, setError] = useState<string>();
  const [loadError, setLoadError] = useState<string>();
  // deleted here or elsewhere (another tab, another client of the API): the page says so instead of failing
  const [gone, setGone] = useState(false);
  const [renaming, setRenaming] = useState(false);
  const narrow = useNarrow();
  const [text, setText] = useState(() => drafts.get(id));
  const [held, setHeld] = useState<string>();
  const [sending, setSending] = useState(false);
  // decisions sent from this page and not answered yet, by pending id: the turn goes on (a save pipeline
  // runs) and the item's record says so, not "waiting for you", until the item closes
  const [deciding, setDeciding] = useState<Record<string, string>>({});
  const refreshTimer = useRef<ReturnType<typeof setTimeout>>(undefined);
  const listChanged = useRef(onChanged);
  listChanged.current = onChanged;

  const refresh = useCallback(async () => {
    try {
      const next = await api<ConversationView>('GET', `/v1/conversations/${id}`);
      setView(next);
      setTranscript((t) => addMessages(t, next.messages));
      setLoadError(undefined);
    } catch (e) {
      const err = e as ApiError;
      if (err.status === 404) setGone(true);
      // unreachable: the connection banner says so, and the page keeps what it shows
      else if (err.status !== 0) setLoadError(err.message);
    }
  }, [id]);

  const scheduleRefresh = useCallback(() => {
    clearTimeout(refreshTimer.current);
    refreshTimer.current = setTimeout(refresh, 150);
  }, [refresh]);

  useEffect(() => {
    refresh();
    const handle = openEventStream(
      id,
      (event: StreamEvent) => {
        setTranscript((t) => applyEvent(t, event));
        if (REFRESH_ON.has(event.type)) scheduleRefresh();
        // the list's "waiting for you" badge and its titles follow what happens here
        if (event.type === 'pending.opened' || event.type === 'pending.closed' || event.type === 'title.changed') listChanged.current();
      },
      (status) => setStream(status),
      () => {
        setGone(true);
        listChanged.current();
      },
    );
    return () => {
      handle.close();
      clearTimeout(refreshTimer.current);
    };
  }, [id, refresh, scheduleRefresh]);

  useEffect(() => drafts.set(id, text), [id, text]);

  const composer = useRef<HTMLTextAreaElement>(null);
  const ready = !!view;
  useEffect(() => {
    if (justStarted && ready) composer.current?.focus();
  }, [justStarted, ready]);
  // after Rename (saved or not) the focus goes back to the title it replaced, not to the page's body
  const titleRef = useRef<HTMLHeadingElement>(null);
  const renamed = useRef(false);
  useEffect(() => {
    if (!renaming && renamed.current) titleRef.current?.focus();
    renamed.current = renaming;
  }, [renaming]);
  useEffect(
    () =>
      onCompose((composed) => {
        setText(composed);
        composer.current?.focus();
      }),
    [],
  );

  const running = sending || view?.status === 'running' || Object.keys(deciding).length > 0;
  const follow = useFollow({
    ready: !!view,
    content: [transcript.order.length, transcript.drafts, transcript.items, transcript.progress],
    pendingIds: view?.pending.map((p) => p.id) ?? [],
  });

  // the tab names the conversation, and says when something waits for the person
  const waitingCount = view?.pending.length ?? 0;
  // and, when its agent says, who it acts for (a bar's name), so tabs of one agent tell themselves apart
  const [tabName, setTabName] = useState<{ id: string; name?: string }>();
  useEffect(() => {
    if (!view) return;
    let live = true;
    tabNameFor(view.agent)?.(view)
      .then((name) => live && setTabName({ id: view.id, name }))
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, [view?.id, view?.agent]);
  const named = tabName?.id === view?.id ? tabName?.name : undefined;
  useEffect(() => {
    if (!view) return;
    document.title = `${waitingCount ? `(${waitingCount}) ` : ''}${view.title}${named ? ` · ${named}` : ''} — Brigade`;
  }, [view?.title, waitingCount, named]);
  useEffect(() => () => void (document.title = 'Brigade'), []);

  // a call's arguments as asked, and as run after an edit, so each row can say what changed
  const { callArgs, ranArgs } = useMemo(() => {
    const asked: Record<string, Record<string, unknown>> = {};
    const ran: Record<string, Record<string, unknown>> = {};
    for (const mid of transcript.order) {
      const m = transcript.messages[mid];
      for (const call of m?.toolCalls ?? []) asked[call.id] = call.args;
      if (m?.role === 'tool' && m.callId && m.args) ran[m.callId] = m.args;
    }
    return { callArgs: asked, ranArgs: ran };
  }, [transcript.order, transcript.messages]);

  const send = useCallback(
    async (message: string, pending?: 'decline' | 'keep') => {
      setSending(true);
      setError(undefined);
      follow.stickNow();
      try {
        const result = await api<TurnResult>(
          'POST',
          `/v1/conversations/${id}/messages`,
          { text: message, ...(pending ? { pending } : {}) },
          { idempotencyKey: newIdempotencyKey() },
        );
        setTranscript((t) => addMessages(t, result.messages));
        onChanged();
        return true;
      } catch (e) {
        const err = e as ApiError;
        if (err.status === 404) setGone(true);
        // unreachable: the connection banner says so, once
        else if (err.status !== 0) setError(err.message);
        // Put the text back where the person typed it: nothing is lost.
        setText((current) => (current ? current : message));
        return false;
      } finally {
        setSending(false);
        refresh();
      }
    },
    [id, onChanged, refresh],
  );

  // A message written while a turn runs is held and sent when the turn ends; if the turn waits on an item,
  // the person says what the message does: decline the items with it as the reason, or wait for the decision
  // (then the conversation holds it, and sends it once the turn ends).
  const heldBlocked = !!view?.pending.some((p) => pendingKind(p.kind).answeredByMessage !== false);
  useEffect(() => {
    if (held && !running && view && !heldBlocked) {
      const message = held;
      setHeld(undefined);
      send(message);
    }
  }, [held, running, view, heldBlocked, send]);

  // Stop: the running turn ends at once, keeping what streamed; the waiting send answers with `stopped`.
  const [stopping, setStopping] = useState(false);
  const stop = useCallback(async () => {
    setStopping(true);
    try {
      await api<{ stopped: boolean }>('POST', `/v1/conversations/${id}/stop`);
    } catch (e) {
      if ((e as ApiError).status !== 0) setError((e as ApiError).message);
    } finally {
      setStopping(false);
      refresh();
    }
  }, [id, refresh]);

  const decide = useCallback(
    async (body: Record<string, unknown>) => {
      setError(undefined);
      const pendingId = String(body.pendingId ?? '');
      setDeciding((d) => ({ ...d, [pendingId]: String(body.decision ?? '') }));
      // the decision's record takes the focus the card had as soon as the card goes (which may be before
      // the answer comes), and the view follows what the agent does next
      follow.focusAfterDecision(pendingId);
      try {
        const result = await api<TurnResult>('POST', `/v1/conversations/${id}/decisions`, body, { idempotencyKey: newIdempotencyKey() });
        setTranscript((t) => addMessages(t, result.messages));
        onChanged();
      } finally {
        // the view that was read before the decision still says "waiting": the fresh one replaces it first
        await refresh();
        setDeciding(({ [pendingId]: _, ...rest }) => rest);
      }
    },
    [id, onChanged, refresh],
  );

  // the message actions (edit, regenerate, versions, fork): an edit or a regenerate runs a turn as a send does
  const messageActions = useMemo<MessageActionsValue>(() => {
    const siblings = versionRows(view?.messages ?? []);
    return {
      conversationId: id,
      running,
      siblings: (messageId) => siblings.get(messageId),
      refresh,
      onChanged,
      runTurn: async (request) => {
        setSending(true);
        setError(undefined);
        follow.stickNow();
        try {
          const result = await request();
          setTranscript((t) => addMessages(t, result.messages));
          onChanged();
          return result;
        } finally {
          setSending(false);
          await refresh();
        }
      },
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [id, running, view?.messages, refresh, onChanged]);

  // a tile's first prompt, sent once the page is ready
  useEffect(() => {
    if (!view) return;
    const first = outbox.take(id);
    if (first) send(first);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [!!view]);

  // a turn that ended in a failure is offered again; a run's failure its result says is not said twice
  const retryText = running ? undefined : failedTurnText(transcript);
  const saidFailures = useMemo(() => failuresSaid(transcript), [transcript]);

  // the pending items whose record is in the transcript: a declined call is said there, once
  const recordedCalls = useMemo(
    () =>
      new Set(
        Object.values(transcript.items)
          .map((entry) => entry.item.callId)
          .filter(Boolean) as string[],
      ),
    [transcript.items],
  );

  if (gone) {
    return (
      <section className="conversation gone" aria-labelledby="gone-title">
        <h1 id="gone-title" tabIndex={-1}>
          This conversation was deleted
        </h1>
        <p>It was deleted, here or in another window, and is no longer in your list. Nothing more can be added to it.</p>
        <p>
          <a
            className="button"
            href="/"
            onClick={(e) => {
              e.preventDefault();
              navigate('/');
            }}
          >
            Start a new conversation
          </a>
        </p>
      </section>
    );
  }
  if (loadError && !view) {
    return (
      <section className="conversation">
        <p role="alert" className="banner error">
          {loadError}
        </p>
      </section>
    );
  }
  if (!view) return <p className="muted loading">Loading the conversation…</p>;

  // the agent's own tools that declare sources (GET /v1/meta); an MCP tool never does
  const withSources = new Set(
    meta?.agents
      .find((a) => a.name === view.agent)
      ?.tools.filter((tool) => tool.sources)
      .map((tool) => tool.name) ?? [],
  );
  const linkable = (tool: string) => withSources.has(tool);
  const workflowUrl = meta?.temporal.workflowUrlTemplate?.replace('{workflowId}', encodeURIComponent(view.workflowId));
  const SidePanel = sidePanelFor(view.agent);
  const examples = examplesFor(view);
  const Subtitle = subtitleFor(view.agent);
  const offline = meta?.model === 'offline';
  const side = SidePanel && <SidePanel view={view} onChanged={refresh} />;

  return (
    <div className={`conversation-grid ${SidePanel && !narrow ? 'with-side' : ''}`}>
      <section className="conversation" aria-labelledby="conversation-title">
        <header className="conversation-head">
          {renaming ? (
            <RenameForm
              id={id}
              title={view.title}
              onDone={(title) => {
                setRenaming(false);
                if (title) {
                  setView((v) => (v ? { ...v, title } : v));
                  onChanged();
                }
              }}
            />
          ) : (
            <h1 id="conversation-title" ref={titleRef} tabIndex={-1}>
              <span className={`agent-tag agent-${view.agent}`}>{agentLabel(view.agent)}</span>{' '}
              <span className="title-text">{view.title}</span>
            </h1>
          )}
          <div className="head-meta">
            {(running || view.status === 'waiting') && (
              <span className={`status status-${running ? 'running' : view.status}`} role="status">
                {running ? 'Working…' : 'Waiting for you'}
              </span>
            )}
            {!running && view.status === 'interrupted' && (
              <span className="status status-interrupted" role="status">
                Interrupted: send a message to go on
              </span>
            )}
            {!running && view.status !== 'waiting' && view.status !== 'interrupted' && (
              <span className="status status-ready visually-hidden" role="status">
                Ready
              </span>
            )}
            {/* for assistive technology and tests; a lost connection is the banner's to say */}
            <span className={`stream stream-${stream} visually-hidden`}>
              {stream === 'live' ? 'Updates arrive as they happen' : 'Catching up…'}
            </span>
            {offline && (
              <span
                className="chip offline-badge"
                title="No AI model is connected to this Brigade: a stand-in answers a few fixed phrasings"
              >
                Offline model
              </span>
            )}
            {Subtitle ? (
              <Subtitle view={view} />
            ) : (
              typeof view.client === 'string' && view.client && <span className="acting-for">for {view.client}</span>
            )}
            <McpTools agent={view.agent} />
            <ConversationActions
              id={id}
              title={view.title}
              onRename={() => setRenaming(true)}
              onDeleted={() => onDeleted(view.title)}
              details={
                <>
                  <p>
                    Workflow ID <code>{view.workflowId}</code>
                    {workflowUrl && (
                      <>
                        {' '}
                        ·{' '}
                        <a href={workflowUrl} target="_blank" rel="noreferrer">
                          Open in the Temporal Web UI
                        </a>
                      </>
                    )}
                  </p>
                  <p>Live updates: {stream === 'live' ? 'connected' : stream === 'closed' ? 'closed' : 'reconnecting'}</p>
                  <UsagePanel usage={view.usage} model={meta?.model} budget={view.budget} />
                </>
              }
            />
          </div>
        </header>
        {loadError && (
          <p role="alert" className="banner error">
            {loadError}
          </p>
        )}

        <div className="scroller" ref={follow.scrollerRef}>
          {narrow && side}
          <ol className="transcript" aria-label="Messages" aria-live="polite" aria-relevant="additions">
            {branchOrder(transcript, view.messages).map((mid) => {
              if (mid.startsWith('progress:')) {
                const key = mid.slice(9);
                return (
                  <li key={mid} className="msg progress-row">
                    <ProgressList progress={{ [key]: transcript.progress[key] ?? [] }} failureSaid={saidFailures.has(key)} />
                  </li>
                );
              }
              if (mid.startsWith('pending:')) {
                const entry = transcript.items[mid.slice(8)];
                return entry ? (
                  <PendingRecord
                    key={mid}
                    item={entry.item}
                    closed={entry.closed}
                    agent={view.agent}
                    deciding={deciding[entry.item.id]}
                    ran={ranArgs[entry.item.callId]}
                  />
                ) : null;
              }
              const message = transcript.messages[mid];
              const row = message ? (
                <MessageRow
                  key={mid}
                  message={message}
                  agent={view.agent}
                  callArgs={callArgs}
                  ranArgs={ranArgs}
                  recordedCalls={recordedCalls}
                  linkable={linkable}
                  actions={messageActions}
                />
              ) : (
                <DraftRow key={mid} draft={transcript.drafts[mid]} />
              );
              const cut = transcript.cut?.[mid];
              const folded = mid === view.context?.throughMessageId;
              return cut || folded ? (
                <Fragment key={mid}>
                  {row}
                  {cut && (
                    <li className="msg context-cut" role="note">
                      The agent could read only the beginning of the message above: it is too large for what the agent reads at once.
                    </li>
                  )}
                  {folded && <ContextFold conversationId={view.id} throughMessageId={mid} />}
                </Fragment>
              ) : (
                row
              );
            })}
            {retryText !== undefined && <TryAgain disabled={sending} onRetry={() => void send(retryText)} />}
          </ol>
          {transcript.order.length === 0 && view.messages.length === 0 && examples.length > 0 && (
            <section className="examples" aria-labelledby="examples-title">
              <h2 id="examples-title">Not sure where to start? Try:</h2>
              <ul>
                {examples.map((example) => (
                  <li key={example}>
                    <button type="button" className="secondary" onClick={() => compose(example)}>
                      {example}
                    </button>
                  </li>
                ))}
              </ul>
            </section>
          )}

          <PendingPanel pending={view.pending} meta={meta} agent={view.agent} onDecide={decide} />
          <div ref={follow.endRef} className="transcript-end" />
        </div>

        {error && (
          <p role="alert" className="banner error">
            {error}
          </p>
        )}
        {view.held && (
          <p className="held held-server" role="status">
            Sent once you have decided: “{view.held.text}”
          </p>
        )}
        {held && (
          <div className="held" role="status">
            <span>
              {running || !heldBlocked
                ? 'Held until the answer is done'
                : `Held: the ${view.pending.length > 1 ? 'items above wait' : 'item above waits'} for your decision`}
              : “{held}”
            </span>{' '}
            {!running && heldBlocked && (
              <span className="held-choice">
                <button
                  type="button"
                  className="secondary"
                  onClick={() => {
                    const message = held;
                    setHeld(undefined);
                    send(message, 'decline');
                  }}
                >
                  Send as my answer: decline
                </button>{' '}
                <button
                  type="button"
                  className="secondary"
                  disabled={!!view.held}
                  title={view.held ? 'Another message is already waiting for your decision' : undefined}
                  onClick={() => {
                    const message = held;
                    setHeld(undefined);
                    send(message, 'keep');
                  }}
                >
                  Send after I decide
                </button>
              </span>
            )}{' '}
            <button
              type="button"
              className="link"
              onClick={() => {
                setText(held);
                setHeld(undefined);
              }}
            >
              edit
            </button>
          </div>
        )}
        <form
          ref={follow.composerRef}
          className="composer"
          onSubmit={(e) => {
            e.preventDefault();
            const message = text.trim();
            if (!message) return;
            setText('');
            // while an item waits, the message is held too: the person chooses what it does (the bar above)
            if (running || heldBlocked) setHeld(held ? `${held}\n${message}` : message);
            else send(message);
          }}
        >
          {follow.unseen && (
            <button type="button" className="new-below" onClick={follow.toEnd}>
              New messages <span aria-hidden="true">↓</span>
            </button>
          )}
          <label htmlFor="composer-text" className="visually-hidden">
            Message
          </label>
          <textarea
            id="composer-text"
            ref={composer}
            value={text}
            rows={2}
            placeholder={heldBlocked ? 'Write to decline, or for later' : 'Write a message'}
            onChange={(e) => setText(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && !e.shiftKey) {
                e.preventDefault();
                (e.currentTarget.form as HTMLFormElement).requestSubmit();
              }
            }}
          />
          <button type="submit">{running ? 'Send when done' : 'Send'}</button>
          {(running || view.status === 'waiting') && (
            <button
              type="button"
              className="stop"
              onClick={stop}
              disabled={stopping}
              title="Stop this answer; what it wrote so far is kept"
            >
              {stopping ? 'Stopping…' : 'Stop'}
            </button>
          )}
        </form>
      </section>
      {!narrow && side}
    </div>
  );
}
