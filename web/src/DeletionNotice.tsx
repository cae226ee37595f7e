// What the person sees after Delete: that the conversation goes in a few seconds, with Undo; then that it went
// (or why it could not), or that it was kept.
import { forgetDeletion, undoDelete, UNDO_MS, useDeletion } from './deferredDelete';
import { navigate } from './router';

export function DeletionNotice() {
  const { pending, last } = useDeletion();
  if (pending)
    return (
      <div role="status" className="banner deletion">
        <span>
          “{pending.title}” will be deleted in {UNDO_MS / 1000} seconds.
        </span>{' '}
        <button
          type="button"
          className="secondary"
          onClick={() => {
            const kept = undoDelete();
            if (kept) navigate(`/c/${kept.id}`);
          }}
        >
          Undo
        </button>
      </div>
    );
  if (!last) return null;
  return (
    <div role={last.outcome === 'failed' ? 'alert' : 'status'} className={`banner deletion ${last.outcome === 'failed' ? 'error' : ''}`}>
      <span>
        {last.outcome === 'deleted' && <>Deleted “{last.title}”.</>}
        {last.outcome === 'kept' && <>Kept “{last.title}”: nothing was deleted.</>}
        {last.outcome === 'failed' && (
          <>
            “{last.title}” was not deleted: {last.message}
          </>
        )}
      </span>{' '}
      <button type="button" className="secondary" onClick={forgetDeletion} aria-label="Dismiss">
        ×
      </button>
    </div>
  );
}
