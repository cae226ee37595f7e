// What a person does with a whole conversation: rename it, export it (JSON or Markdown), delete it after a
// confirmation that opens on "Keep" and with Undo for a few seconds (deferredDelete.ts); and, for operators,
// its details (the workflow, the Temporal Web UI, usage) out of the way.
import { type ReactNode, useEffect, useRef, useState } from 'react';
import { ApiError, api, authorizationFor } from './api';
import { ConfirmDialog } from './ConfirmDialog';
import { connection } from './connection';
import { UNDO_MS, deleteLater } from './deferredDelete';

/** "Jane’s refund!" → "janes-refund" */
const fileName = (title: string) =>
  title
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^\w\s-]/g, '')
    .trim()
    .replace(/[\s_-]+/g, '-')
    .slice(0, 60) || 'conversation';

async function download(id: string, title: string, format: 'json' | 'markdown'): Promise<void> {
  const path = `/v1/conversations/${encodeURIComponent(id)}/export?format=${format}`;
  let response: Response;
  const startedAt = connection.started();
  try {
    response = await fetch(path, { headers: authorizationFor(path) });
  } catch {
    connection.failed(startedAt);
    throw new ApiError(0, 'network error');
  }
  connection.answered(startedAt);
  if (!response.ok)
    throw new ApiError(response.status, ((await response.json().catch(() => ({}))) as { error?: string }).error ?? response.statusText);
  const url = URL.createObjectURL(await response.blob());
  const link = document.createElement('a');
  link.href = url;
  link.download = `${fileName(title)}.${format === 'json' ? 'json' : 'md'}`;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export function ConversationActions({
  id,
  title,
  onRename,
  onDeleted,
  details,
}: {
  id: string;
  title: string;
  onRename: () => void;
  onDeleted: () => void;
  details: ReactNode;
}) {
  const menu = useRef<HTMLDetailsElement>(null);
  const [error, setError] = useState<string>();
  const [confirming, setConfirming] = useState(false);
  const close = () => menu.current?.removeAttribute('open');

  return (
    <>
      <details className="menu" ref={menu}>
        <summary>Options</summary>
        <div className="menu-items">
          <button
            type="button"
            className="secondary"
            onClick={() => {
              close();
              onRename();
            }}
          >
            Rename
          </button>
          <button
            type="button"
            className="secondary"
            onClick={() => {
              close();
              download(id, title, 'markdown').catch((e: ApiError) => setError(e.message));
            }}
          >
            Export as Markdown
          </button>
          <button
            type="button"
            className="secondary"
            onClick={() => {
              close();
              download(id, title, 'json').catch((e: ApiError) => setError(e.message));
            }}
          >
            Export as JSON
          </button>
          <button
            type="button"
            className="secondary danger-text"
            onClick={() => {
              close();
              setError(undefined);
              setConfirming(true);
            }}
          >
            Delete…
          </button>
          <details className="ops">
            <summary>Details</summary>
            {details}
          </details>
        </div>
      </details>
      {error && (
        <p role="alert" className="banner error">
          {error}
        </p>
      )}
      <ConfirmDialog
        open={confirming}
        heading={`Delete “${title}”?`}
        action="Delete"
        onClose={() => setConfirming(false)}
        onConfirm={() => {
          // sent when the undo window closes: until then nothing is deleted
          deleteLater(id, title);
          setConfirming(false);
          onDeleted();
        }}
      >
        <p>
          Its messages and decisions are removed for good {UNDO_MS / 1000} seconds after you delete it (you can undo until then). Export it
          first if you want to keep a copy.
        </p>
      </ConfirmDialog>
    </>
  );
}

/** The title in place, editable: Enter saves, Escape keeps the old one. */
export function RenameForm({ id, title, onDone }: { id: string; title: string; onDone: (title?: string) => void }) {
  const [value, setValue] = useState(title);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    input.current?.focus();
    input.current?.select();
  }, []);
  return (
    <form
      className="rename"
      onSubmit={async (e) => {
        e.preventDefault();
        const next = value.trim();
        if (!next || next === title) return onDone();
        setBusy(true);
        try {
          const renamed = await api<{ title: string }>('PATCH', `/v1/conversations/${encodeURIComponent(id)}`, { title: next });
          onDone(renamed.title);
        } catch (err) {
          setError((err as ApiError).message);
          setBusy(false);
        }
      }}
    >
      <label htmlFor="rename-title" className="visually-hidden">
        Title
      </label>
      <input
        id="rename-title"
        ref={input}
        value={value}
        maxLength={200}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? 'rename-error' : undefined}
        onChange={(e) => setValue(e.target.value)}
        onKeyDown={(e) => e.key === 'Escape' && onDone()}
      />
      <button type="submit" disabled={busy}>
        Save
      </button>
      <button type="button" className="secondary" onClick={() => onDone()}>
        Cancel
      </button>
      {error && (
        <p id="rename-error" role="alert" className="field-error">
          {error}
        </p>
      )}
    </form>
  );
}
