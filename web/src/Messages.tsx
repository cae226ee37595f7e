import { useState } from 'react';
import { Cards } from './Cards';
import { MessageActions, MessageEditor, type MessageActionsValue } from './MessageActions';
import { ConnectButton } from './McpTools';
import { Markdown } from './markdown';
import { ResultExtras } from './ResultExtras';
import { pendingKind } from './pendingKinds';
import { draftText } from './transcript';
import type { ClosedInfo, Draft } from './transcript';
import { approvedWords, callSentence, changedArgs, resultKind, resultSentence, resultView, stoppedSentence } from './toolWords';
import type { ChatMessage, PendingItem } from './types';

type Args = Record<string, unknown>;

/** The raw arguments or result, for whoever wants them: behind a toggle, never the words. */
function Raw({ label, value }: { label: string; value: unknown }) {
  return (
    <details className="raw">
      <summary>{label}</summary>
      <pre>{JSON.stringify(value, null, 2)}</pre>
    </details>
  );
}

function Changes({ changes }: { changes: [string, string, string][] }) {
  if (changes.length === 0) return null;
  return (
    <p className="changed">
      You changed{' '}
      {changes.map(([field, before, after], i) => (
        <span key={field}>
          {i > 0 ? ', ' : ''}
          {field}: <del>{before}</del> <span aria-hidden="true">→</span>
          <span className="visually-hidden"> to </span> <ins>{after}</ins>
        </span>
      ))}{' '}
      before approving.
    </p>
  );
}

/**
 * One message of the transcript in words. `agent` says whose tools these are; `callArgs` gives a result the
 * arguments its call asked for, `ranArgs` gives a call the arguments it finally ran with (after an edit);
 * `linkable` says which tools declare sources (their https: sources are links).
 */
export function MessageRow({
  message,
  agent,
  callArgs,
  ranArgs,
  recordedCalls,
  linkable,
  actions,
}: {
  message: ChatMessage;
  agent: string;
  callArgs?: Record<string, Args>;
  ranArgs?: Record<string, Args>;
  /** calls whose pending item's record already says how the person decided */
  recordedCalls?: ReadonlySet<string>;
  /** whether a tool's sources may be links: it declares them (GET /v1/meta) */
  linkable?: (tool: string) => boolean;
  /** copy, edit, regenerate, versions and fork (MessageActions.tsx); none without it */
  actions?: MessageActionsValue;
}) {
  // 'closed': the editor was just closed, so the Edit button that opened it takes the focus back
  const [editing, setEditing] = useState<'no' | 'open' | 'closed'>('no');
  if (message.role === 'tool') {
    const kind = resultKind(message.result);
    const args = message.args ?? {};
    const tool = message.tool ?? 'tool';
    // the record where the item opened says it once ("You declined: …"); the result would say it again
    if (kind === 'declined' && message.callId && recordedCalls?.has(message.callId)) return null;
    if (kind === 'stopped') {
      return (
        <li className="msg tool stopped" data-message-id={message.id} tabIndex={-1}>
          <p className="tool-line muted">{stoppedSentence(message.result)}</p>
        </li>
      );
    }
    // the agent's view of the result replaces the raw details: a person reads a card, not JSON
    const view = resultView(agent, tool, message.result, args);
    return (
      <li className={`msg tool ${kind}`} data-message-id={message.id} tabIndex={-1}>
        <p className="tool-line">
          <span aria-hidden="true">{kind === 'ok' ? '✓' : kind === 'declined' ? '✕' : '!'}</span>{' '}
          {resultSentence(agent, tool, message.result, args)}
        </p>
        {typeof (message.result as { connect?: unknown } | undefined)?.connect === 'string' && (
          <p className="connect-line">
            <ConnectButton server={(message.result as { connect: string }).connect} />
          </p>
        )}
        {view === undefined ? <Raw label="Details" value={message.result} /> : view}
        {!message.cards?.length && <ResultExtras result={message.result} linkable={linkable?.(tool) ?? false} />}
        {message.cards && <Cards cards={message.cards} />}
      </li>
    );
  }
  if (message.role === 'user') {
    return (
      <li className="msg user" data-message-id={message.id} tabIndex={-1}>
        <span className="visually-hidden">You: </span>
        {editing === 'open' ? (
          <MessageEditor actions={actions} message={message} onDone={() => setEditing('closed')} />
        ) : (
          <>
            <p>{message.text}</p>
            <MessageActions actions={actions} message={message} onEdit={() => setEditing('open')} focusEdit={editing === 'closed'} />
          </>
        )}
      </li>
    );
  }
  return (
    <li className="msg assistant" data-message-id={message.id} tabIndex={-1}>
      <span className="visually-hidden">Agent: </span>
      {message.text && <Markdown text={message.text} />}
      {message.stopped && <p className="stopped-line muted">You stopped this answer.</p>}
      {message.toolCalls?.map((call) => {
        const ran = ranArgs?.[call.id];
        const changes = changedArgs(call.args, ran);
        return (
          <div key={call.id} className="tool-call">
            <p className="tool-line">
              <span aria-hidden="true">→</span> <span className="visually-hidden">The agent asks to: </span>
              {callSentence(agent, call.name, changes.length ? ran! : call.args)}
            </p>
            <Changes changes={changes} />
            <Raw label="Details" value={{ tool: call.name, args: call.args, ...(changes.length ? { ranWith: ran } : {}) }} />
          </div>
        );
      })}
      {message.cards && <Cards cards={message.cards} />}
      <MessageActions actions={actions} message={message} />
    </li>
  );
}

export function DraftRow({ draft }: { draft?: Draft }) {
  return (
    <li className="msg assistant streaming" aria-busy="true">
      <span className="visually-hidden">Agent (writing): </span>
      <Markdown text={draftText(draft)}>
        <span className="caret" aria-hidden="true">
          ▍
        </span>
      </Markdown>
    </li>
  );
}

const DECIDED: Record<string, string> = {
  approve: 'You approved',
  reject: 'You declined',
  edit: 'You approved with changes',
  accept: 'You accepted',
  yes: 'You said yes',
  no: 'You said no',
};

const plainValue = (value: unknown): string =>
  value === undefined || value === null ? 'nothing' : typeof value === 'string' ? value : JSON.stringify(value);

/**
 * A pending item in the place it opened: what it asked, and once closed, how it ended and why. `deciding`: the
 * decision this page sent, while the turn it resumed still runs (the item closes when its tool is done).
 */
export function PendingRecord({
  item,
  closed,
  agent,
  deciding,
  ran,
}: {
  item: PendingItem;
  closed?: ClosedInfo;
  agent: string;
  deciding?: string;
  /** the arguments the call ran with (its tool message's): an approval with changes is recorded as it ran */
  ran?: Record<string, unknown>;
}) {
  const what = pendingKind(item.kind).label.toLowerCase();
  const edited = closed?.decision === 'edit' && ran ? ran : undefined;
  const sentence = item.kind === 'approval' ? callSentence(agent, item.tool, edited ?? item.args) : '';
  const prompt = item.prompt?.replace(/[.?!]+$/, '');
  const about = sentence ? `${sentence[0]!.toLowerCase()}${sentence.slice(1)}` : `the ${what}${prompt ? ` (“${prompt}”)` : ''}`;
  let outcome: string;
  // a reason that only repeats how it closed ("expired") says nothing more
  const reason = closed?.reason && !/^(closed: )?(expired|superseded|decided)$/i.test(closed.reason.trim()) ? closed.reason : undefined;
  // Stop withdraws what the turn asked, a child run's question too ("the turn was stopped"): nobody declined it
  if (closed && /pressed Stop|the turn was stopped/i.test(closed.reason ?? ''))
    outcome = sentence ? `You stopped this answer, so this was not done: ${about}.` : `You stopped this answer, so ${about} was withdrawn.`;
  // an edit, a regenerate or a version switch left the turn that asked behind (issue 45): nobody decided it
  else if (closed && /another branch/i.test(closed.reason ?? ''))
    outcome = `Left behind when you moved to another version, so this was not done: ${about}.`;
  else if (!closed && deciding) outcome = `${DECIDED[deciding] ?? 'You decided'}: ${about}. Working on it…`;
  else if (!closed) outcome = `Waiting for you: ${about}.`;
  else if (closed.closedAs === 'expired' || closed.timedOut)
    outcome = sentence ? `No answer in time, so this ${what} ran out: ${about}.` : `No answer in time, so ${about} ran out.`;
  else if (closed.closedAs === 'superseded') outcome = `Declined with your message: ${about}${reason ? ` (${reason})` : ''}.`;
  else {
    const option = closed.choice ? (item.options?.find((o) => o.id === closed.choice)?.name ?? closed.choice) : undefined;
    // what the person changed, old → new, so the record says what was approved and not what was asked
    const changes = edited
      ? Object.keys(edited)
          .filter((key) => JSON.stringify(edited[key]) !== JSON.stringify(item.args[key]))
          .map((key) => `${key.replace(/_/g, ' ')} ${plainValue(item.args[key])} → ${plainValue(edited[key])}`)
      : [];
    // and what it touched, in the agent's words (the order, current → new as it ran, the recipe saved)
    const touched =
      item.kind === 'approval' && (closed.decision === 'approve' || closed.decision === 'edit')
        ? approvedWords(agent, item.tool, edited ?? item.args, item.preview)
        : undefined;
    outcome = `${DECIDED[closed.decision ?? ''] ?? 'You decided'}: ${option ?? about}${changes.length ? ` (changed: ${changes.join('; ')})` : ''}${reason ? ` (${reason})` : ''}.${touched ? ` ${touched}.` : ''}`;
  }
  return (
    <li
      className={`msg record ${closed ? `closed ${closed.closedAs ?? ''} ${closed.decision ?? ''}` : 'open'}`}
      data-pending-id={item.id}
      tabIndex={-1}
    >
      <span aria-hidden="true">{closed ? (closed.decision === 'reject' || closed.decision === 'no' ? '✕' : '✓') : '•'}</span> {outcome}
    </li>
  );
}
