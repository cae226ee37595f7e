// The question before an action that cannot be taken back (delete a conversation, revoke an API key): a modal
// dialog that opens with the focus on "Keep", so Enter, Space or Escape keep; only a deliberate choice acts.
import { type ReactNode, useEffect, useRef } from 'react';

export function ConfirmDialog({
  open,
  heading,
  children,
  action,
  busyAction,
  busy = false,
  error,
  onConfirm,
  onClose,
}: {
  open: boolean;
  heading: string;
  children: ReactNode;
  /** the button that acts, in words ("Delete", "Revoke") */
  action: string;
  busyAction?: string;
  busy?: boolean;
  error?: string;
  onConfirm: () => void;
  /** the dialog closed (Keep, Escape, or after the action): the caller's `open` follows */
  onClose: () => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const keep = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    const element = dialog.current;
    if (!element) return;
    if (open && !element.open) {
      element.showModal();
      // showModal focuses the first button (the action) unless told otherwise
      keep.current?.focus();
    } else if (!open && element.open) element.close();
  }, [open]);
  const headingId = `confirm-${action.toLowerCase()}-heading`;
  return (
    <dialog ref={dialog} className="confirm" aria-labelledby={headingId} onClose={onClose}>
      <h2 id={headingId}>{heading}</h2>
      {children}
      {error && (
        <p role="alert" className="field-error">
          {error}
        </p>
      )}
      <div className="actions">
        <button type="button" className="danger" disabled={busy} onClick={onConfirm}>
          {busy ? (busyAction ?? action) : action}
        </button>
        <button type="button" className="secondary" ref={keep} onClick={() => dialog.current?.close()}>
          Keep it
        </button>
      </div>
    </dialog>
  );
}
