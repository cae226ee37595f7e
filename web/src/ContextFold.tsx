import { useState } from 'react';
import { api } from './api';

interface Summary {
  text: string;
  throughMessageId: string;
  version: number;
  createdAt: string;
}

/**
 * Where the agent's model stops reading the conversation itself: the messages above are still all here for the
 * person, but the model reads a summary of them, which this row lets the person read too.
 */
export function ContextFold({ conversationId, throughMessageId }: { conversationId: string; throughMessageId: string }) {
  const [summary, setSummary] = useState<Summary | undefined>();
  const [open, setOpen] = useState(false);
  const [error, setError] = useState<string | undefined>();

  async function toggle() {
    if (open) return setOpen(false);
    setOpen(true);
    // read afresh each time: a later fold replaces the summary
    try {
      setSummary(await api<Summary>('GET', `/v1/conversations/${conversationId}/context-summary`));
      setError(undefined);
    } catch (failure) {
      setError((failure as Error).message);
    }
  }

  return (
    <li className="msg context-fold" data-through={throughMessageId}>
      <p>
        <span aria-hidden="true">⋯</span> The agent reads a summary of the messages above, not the messages themselves.{' '}
        <button type="button" className="link" aria-expanded={open} onClick={() => void toggle()}>
          {open ? 'Hide the summary' : 'Read the summary'}
        </button>
      </p>
      {open && (
        <div className="context-summary" aria-label="What the agent reads of the messages above">
          {error ? (
            <p role="alert">{error}</p>
          ) : summary ? (
            <>
              <p className="muted">
                Summary {summary.version}, made {new Date(summary.createdAt).toLocaleString()}
              </p>
              <p className="context-summary-text">{summary.text}</p>
            </>
          ) : (
            <p className="muted">Loading…</p>
          )}
        </div>
      )}
    </li>
  );
}
