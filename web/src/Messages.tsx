import { Cards } from './Cards';
import { ResultExtras } from './ResultExtras';
import { pendingKind } from './pendingKinds';
import { draftText } from './transcript';
import type { ClosedInfo, Draft } from './transcript';
import type { ChatMessage, PendingItem } from './types';
import { shortJson } from './util';

export function MessageRow({ message }: { message: ChatMessage }) {
  if (message.role === 'tool') {
    const failed = typeof message.result === 'object' && message.result !== null && 'error' in (message.result as object);
    return (
      <li className={`msg tool ${failed ? 'failed' : ''}`} data-message-id={message.id}>
        <details>
          <summary>
            <span aria-hidden="true">←</span> <span className="visually-hidden">Tool result from </span>
            <code>{message.tool}</code> {failed ? 'failed' : 'returned'} <span className="muted">{shortJson(message.result, 70)}</span>
          </summary>
          <pre>{JSON.stringify(message.result, null, 2)}</pre>
        </details>
        {!message.cards?.length && <ResultExtras result={message.result} />}
        {message.cards && <Cards cards={message.cards} />}
      </li>
    );
  }
  if (message.role === 'user') {
    return (
      <li className="msg user" data-message-id={message.id}>
        <span className="visually-hidden">You: </span>
        <p>{message.text}</p>
      </li>
    );
  }
  return (
    <li className="msg assistant" data-message-id={message.id}>
      <span className="visually-hidden">Agent: </span>
      {message.text && <p>{message.text}</p>}
      {message.stopped && <p className="muted">(stopped)</p>}
      {message.toolCalls?.map((call) => (
        <details key={call.id} className="tool-call">
          <summary>
            <span aria-hidden="true">→</span> <span className="visually-hidden">Tool call </span>
            <code>{call.name}</code> <span className="muted">{shortJson(call.args, 70)}</span>
          </summary>
          <pre>{JSON.stringify(call.args, null, 2)}</pre>
        </details>
      ))}
      {message.cards && <Cards cards={message.cards} />}
    </li>
  );
}

export function DraftRow({ draft }: { draft?: Draft }) {
  return (
    <li className="msg assistant streaming" aria-busy="true">
      <span className="visually-hidden">Agent (writing): </span>
      <p>{draftText(draft)}<span className="caret" aria-hidden="true">▍</span></p>
    </li>
  );
}

/** A pending item in the place it opened: what it asked, and once closed, how it ended and why. */
export function PendingRecord({ item, closed }: { item: PendingItem; closed?: ClosedInfo }) {
  let outcome = 'waiting for you';
  if (closed) {
    if (closed.closedAs === 'expired' || closed.timedOut) outcome = `expired${closed.reason ? `: ${closed.reason}` : ' (no answer in time)'}`;
    else if (closed.closedAs === 'superseded') outcome = `superseded${closed.reason ? `: ${closed.reason}` : ''}`;
    else {
      const option = closed.choice ? item.options?.find((o) => o.id === closed.choice)?.name ?? closed.choice : undefined;
      outcome = `${closed.decision ?? 'decided'}${option ? `: ${option}` : ''}${closed.reason ? ` (${closed.reason})` : ''}`;
    }
  }
  return (
    <li className={`msg record ${closed ? `closed ${closed.closedAs ?? ''}` : 'open'}`} data-pending-id={item.id}>
      <span aria-hidden="true">{closed ? '✓' : '•'}</span> {pendingKind(item.kind).label} <code>{item.tool}</code>: <strong>{outcome}</strong>
    </li>
  );
}
