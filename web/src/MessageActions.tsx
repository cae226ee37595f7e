// What a person does with one message of the conversation tree (issue 45 item 5, issue 46 item 6): copy it,
// edit a user message and send it again, answer again (regenerate), move between its versions (‹ 2/3 ›) and
// fork the conversation from it. The page gives each row what the actions need (MessageActionsValue). While a turn runs the server refuses edit, regenerate, branch and fork (409): the
// actions stay in view, marked unavailable, and say why when pressed.
import { type KeyboardEvent, useEffect, useId, useRef, useState } from 'react';
import { ApiError, api, newIdempotencyKey } from './api';
import { navigate } from './router';
import type { ChatMessage, Siblings, TurnResult } from './types';

export interface MessageActionsValue {
  conversationId: string;
  /** a model step or tool is in flight: the server would answer 409 */
  running: boolean;
  /** where each message of the current branch stands among its versions (GET's `siblings`) */
  siblings: (messageId: string) => Siblings | undefined;
  /** an edit or a regenerate runs a turn: the page shows it as its own send does, and reads the view after */
  runTurn: (request: () => Promise<TurnResult>) => Promise<TurnResult>;
  /** the branch changed: read the view again */
  refresh: () => Promise<void>;
  /** the conversation list changed (a fork) */
  onChanged: () => void;
}

const BUSY = 'Not while the agent is answering: wait for it, or press Stop.';

/** Text onto the clipboard; outside a secure context (a LAN address over http) the Clipboard API is absent. */
async function copyText(text: string): Promise<void> {
  if (navigator.clipboard?.writeText) return navigator.clipboard.writeText(text);
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.opacity = '0';
  document.body.append(area);
  area.select();
  const done = document.execCommand('copy');
  area.remove();
  if (!done) throw new Error('copy refused');
}

/**
 * The focus to a message's row (or a button of it, by its label) once it is on the page: a row left off the
 * branch takes its focus with it, and a keyboard user goes on from the message that replaced it.
 */
function focusWhenShown(messageId: string | undefined, labels: string[] = [], frames = 30): void {
  if (!messageId) return;
  const row = document.querySelector<HTMLElement>(`[data-message-id="${CSS.escape(messageId)}"]`);
  // the row's turn, up to the next message of the person's: a wordless step's versions show on its answer (versions.ts)
  const turn: Element[] = [];
  for (let at: Element | null = row; at && (at === row || !at.matches('.msg.user')); at = at.nextElementSibling) turn.push(at);
  // the first of the buttons that can still be pressed (at the first version, "Previous" cannot)
  const button = labels
    .flatMap((label) => turn.map((at) => at.querySelector<HTMLButtonElement>(`button[aria-label="${label}"]:not(:disabled)`)))
    .find(Boolean);
  if (row) (button ?? row).focus();
  else if (frames > 0) requestAnimationFrame(() => focusWhenShown(messageId, labels, frames - 1));
}

/** What a person would paste: the words of the message, or for a tool-only answer what it asked to do. */
const copyable = (message: ChatMessage) => message.text || '';

/**
 * The actions under one user or assistant message. `onEdit` opens the row's inline editor (user messages);
 * the row renders it (MessageEditor) in place of the text.
 */
export function MessageActions({
  actions,
  message,
  onEdit,
  focusEdit,
}: {
  actions?: MessageActionsValue;
  message: ChatMessage;
  onEdit?: () => void;
  focusEdit?: boolean;
}) {
  const [said, setSaid] = useState('');
  const [working, setWorking] = useState(false);
  const clear = useRef<ReturnType<typeof setTimeout>>(undefined);
  const menu = useRef<HTMLDetailsElement>(null);
  const editButton = useRef<HTMLButtonElement>(null);
  useEffect(() => () => clearTimeout(clear.current), []);
  useEffect(() => {
    if (focusEdit) editButton.current?.focus();
  }, [focusEdit]);
  if (!actions) return null;
  const { conversationId, running } = actions;
  const siblings = actions.siblings(message.id);
  const text = copyable(message);
  const blocked = running || working;
  // a step that only asked for tools is part of the answer that follows it: it shows only where its versions are
  const quiet = message.role === 'assistant' && !text;
  if (quiet && !siblings) return null;

  const say = (words: string, ms = 4000) => {
    clearTimeout(clear.current);
    setSaid(words);
    clear.current = setTimeout(() => setSaid(''), ms);
  };
  const failed = (e: unknown) => {
    const err = e as ApiError;
    say(err.status === 409 ? BUSY : err.message || 'That did not work. Try again.', 8000);
  };
  /** a request the server refuses while a turn runs: said instead of sent */
  const guarded = async (request: () => Promise<void>) => {
    if (blocked) return say(BUSY, 6000);
    setWorking(true);
    try {
      await request();
    } catch (e) {
      failed(e);
    } finally {
      setWorking(false);
    }
  };
  const base = `/v1/conversations/${encodeURIComponent(conversationId)}`;
  const toSibling = (step: -1 | 1) =>
    guarded(async () => {
      const leafId = siblings!.ids[siblings!.index + step]!;
      await api('POST', `${base}/branch`, { leafId });
      await actions.refresh();
      const [pressed, other] = step < 0 ? ['Previous version', 'Next version'] : ['Next version', 'Previous version'];
      focusWhenShown(leafId, [pressed, other]);
    });
  const regenerate = () =>
    guarded(async () => {
      const result = await actions.runTurn(() =>
        api<TurnResult>('POST', `${base}/messages/${encodeURIComponent(message.id)}/regenerate`, undefined, {
          idempotencyKey: newIdempotencyKey(),
        }),
      );
      // the new answer, where its versions show; a turn that stopped without one (an approval) has only its step
      focusWhenShown((result.messages.findLast((m) => m.role === 'assistant' && m.text) ?? result.messages[0])?.id);
    });
  const fork = () =>
    guarded(async () => {
      menu.current?.removeAttribute('open');
      const created = await api<{ id: string }>('POST', `${base}/fork`, { messageId: message.id });
      actions.onChanged();
      navigate(`/c/${created.id}`);
    });
  const unavailable = blocked ? { 'aria-disabled': true, title: BUSY } : {};

  return (
    <div className="msg-actions" role="group" aria-label={message.role === 'user' ? 'Your message' : 'Answer'}>
      {siblings && (
        <span className="versions">
          <button
            type="button"
            className="icon"
            aria-label="Previous version"
            disabled={siblings.index === 0}
            {...unavailable}
            onClick={() => toSibling(-1)}
          >
            ‹
          </button>
          <span className="version-count" aria-hidden="true">
            {siblings.index + 1}/{siblings.count}
          </span>
          <span className="visually-hidden">
            Version {siblings.index + 1} of {siblings.count}
          </span>
          <button
            type="button"
            className="icon"
            aria-label="Next version"
            disabled={siblings.index === siblings.count - 1}
            {...unavailable}
            onClick={() => toSibling(1)}
          >
            ›
          </button>
        </span>
      )}
      {text && (
        <button
          type="button"
          className="action"
          onClick={() =>
            copyText(text).then(
              () => say('Copied', 2500),
              () => say('Could not copy: select the text instead', 6000),
            )
          }
        >
          Copy
        </button>
      )}
      {message.role === 'user' && onEdit && (
        <button type="button" className="action" ref={editButton} {...unavailable} onClick={() => (blocked ? say(BUSY, 6000) : onEdit())}>
          Edit
        </button>
      )}
      {message.role === 'assistant' && !quiet && (
        <button type="button" className="action" {...unavailable} onClick={regenerate}>
          {working ? 'Answering…' : 'Regenerate'}
        </button>
      )}
      {!quiet && (
        <details className="menu msg-more" ref={menu}>
          <summary aria-label="More actions">
            <span aria-hidden="true">⋯</span>
          </summary>
          <div className="menu-items">
            <button type="button" className="secondary" {...unavailable} onClick={fork}>
              Fork into a new conversation
            </button>
          </div>
        </details>
      )}
      <span className="action-said" role="status">
        {said}
      </span>
    </div>
  );
}

/**
 * A user message's inline editor: Enter sends the new version (a sibling of the message) and a turn runs from
 * there; Shift+Enter is a new line; Escape cancels. `onDone` closes it (after sending, or on cancel).
 */
export function MessageEditor({ actions, message, onDone }: { actions?: MessageActionsValue; message: ChatMessage; onDone: () => void }) {
  const [text, setText] = useState(message.text);
  const [error, setError] = useState<string>();
  const [sending, setSending] = useState(false);
  const area = useRef<HTMLTextAreaElement>(null);
  const errorId = useId();
  useEffect(() => {
    area.current?.focus();
    area.current?.setSelectionRange(message.text.length, message.text.length);
  }, [message.text]);
  if (!actions) return null;

  const send = async () => {
    const edited = text.trim();
    if (!edited || sending) return;
    if (actions.running) return setError(BUSY);
    setSending(true);
    setError(undefined);
    try {
      const result = await actions.runTurn(() =>
        api<TurnResult>(
          'POST',
          `/v1/conversations/${encodeURIComponent(actions.conversationId)}/messages/${encodeURIComponent(message.id)}/edit`,
          { text: edited },
          { idempotencyKey: newIdempotencyKey() },
        ),
      );
      onDone();
      focusWhenShown(result.messages[0]?.id);
    } catch (e) {
      const err = e as ApiError;
      setError(err.status === 409 ? BUSY : err.message);
      setSending(false);
    }
  };
  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === 'Enter' && !e.shiftKey) {
      e.preventDefault();
      void send();
    } else if (e.key === 'Escape') {
      e.preventDefault();
      onDone();
    }
  };
  return (
    <form
      className="msg-editor"
      onSubmit={(e) => {
        e.preventDefault();
        void send();
      }}
    >
      <label className="visually-hidden" htmlFor={`${errorId}-text`}>
        Edit your message
      </label>
      <textarea
        id={`${errorId}-text`}
        ref={area}
        value={text}
        rows={Math.min(8, Math.max(2, text.split('\n').length))}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={onKeyDown}
        aria-describedby={error ? errorId : undefined}
        disabled={sending}
      />
      {error && (
        <p id={errorId} className="editor-error" role="alert">
          {error}
        </p>
      )}
      <div className="editor-buttons">
        <button type="button" className="secondary small" onClick={onDone} disabled={sending}>
          Cancel
        </button>
        <button type="submit" className="small" disabled={sending || !text.trim()}>
          {sending ? 'Sending…' : 'Send'}
        </button>
      </div>
    </form>
  );
}
