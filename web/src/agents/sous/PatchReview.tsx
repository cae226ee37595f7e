// Patch Review Mode: every ingredient and step in its place, added ones marked new, modified ones
// marked edited with the old text at hand, removed ones as struck ghosts where they were; the notes, the
// summary with its counts, and the whole end state before the person accepts or rejects.
import { useState } from 'react';
import type { PendingViewProps } from '../../agentHome';
import type { ApiError } from '../../api';
import { Countdown } from '../../Countdown';

interface ReviewEntry {
  id: string;
  change: 'added' | 'modified' | 'removed' | 'unchanged';
  text: string;
  oldText?: string;
  status?: string;
}
interface Review {
  baseVersion?: number;
  ingredients: ReviewEntry[];
  steps: ReviewEntry[];
  notes: string[];
  summary?: { title?: string; bullets?: string[]; impacted?: Record<string, number> };
  endState?: {
    title?: string;
    version?: number;
    servings?: number;
    ingredients: { id: string; text: string }[];
    steps: { id: string; text: string; status?: string }[];
    notes?: string[];
  };
}

const CHANGE_LABEL = { added: 'new', modified: 'edited', removed: 'removed', unchanged: '' } as const;

function Entry({ entry, ordered }: { entry: ReviewEntry; ordered?: boolean }) {
  const [showOld, setShowOld] = useState(false);
  const label = CHANGE_LABEL[entry.change];
  return (
    <li className={`review-entry ${entry.change}`} data-change={entry.change}>
      {label && <span className={`chip change-${entry.change}`}>{label}</span>}
      {entry.change === 'removed' ? (
        <del>
          <span className="visually-hidden">removed: </span>
          {entry.text}
        </del>
      ) : entry.change === 'added' ? (
        <ins>
          <span className="visually-hidden">added: </span>
          {entry.text}
        </ins>
      ) : (
        <span>{entry.text}</span>
      )}
      {entry.status === 'done' && <span className="chip">done</span>}
      {entry.change === 'modified' && entry.oldText !== undefined && (
        <>
          {' '}
          <button type="button" className="link" aria-expanded={showOld} onClick={() => setShowOld(!showOld)}>
            {showOld ? 'hide' : 'show'} the old text
          </button>
          {showOld && (
            <p className="old-text">
              was: <del>{entry.oldText}</del>
            </p>
          )}
        </>
      )}
      {!ordered && null}
    </li>
  );
}

export function PatchReview({ item, onDecide }: PendingViewProps) {
  const review = (item.details?.review ?? undefined) as Review | undefined;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [tab, setTab] = useState<'changes' | 'end'>('changes');
  const headingId = `patch-${item.id}`;
  const decide = async (decision: 'accept' | 'reject') => {
    setBusy(true);
    setError(undefined);
    try {
      await onDecide({ pendingId: item.id, decision });
    } catch (e) {
      setError((e as ApiError).message);
    } finally {
      setBusy(false);
    }
  };
  if (!review) return null;
  const impacted = review.summary?.impacted ?? {};
  // [key, noun, what happened]: "1 ingredient added", "2 steps edited"
  const counts = [
    ['ingredientsAdded', 'ingredient', 'added'],
    ['ingredientsModified', 'ingredient', 'edited'],
    ['ingredientsRemoved', 'ingredient', 'removed'],
    ['stepsAdded', 'step', 'added'],
    ['stepsModified', 'step', 'edited'],
    ['stepsRemoved', 'step', 'removed'],
  ].filter(([key]) => (impacted[key!] ?? 0) > 0);

  return (
    <article className="pending-card patch-review" aria-labelledby={headingId}>
      <h2 id={headingId}>Review the proposed change{review.summary?.title ? `: ${review.summary.title}` : ''}</h2>
      {review.summary?.bullets && review.summary.bullets.length > 0 && (
        <ul className="bullets">
          {review.summary.bullets.map((b, i) => (
            <li key={i}>{b}</li>
          ))}
        </ul>
      )}
      {counts.length > 0 && (
        <p className="impacted">
          {counts.map(([key, noun, what]) => `${impacted[key!]} ${impacted[key!] === 1 ? noun : `${noun}s`} ${what}`).join(' · ')}
        </p>
      )}
      <Countdown expiresAt={item.expiresAt} label="Decide within" />
      <div className="tabs" role="tablist" aria-label="Review">
        <button type="button" role="tab" aria-selected={tab === 'changes'} onClick={() => setTab('changes')}>
          Changes in place
        </button>
        <button type="button" role="tab" aria-selected={tab === 'end'} onClick={() => setTab('end')}>
          Recipe after accepting
        </button>
      </div>
      {tab === 'changes' ? (
        <div role="tabpanel" className="review-columns">
          <section aria-label="Ingredients (review)">
            <h3>Ingredients</h3>
            <ul className="review-list">
              {review.ingredients.map((e) => (
                <Entry key={`${e.change}-${e.id}`} entry={e} />
              ))}
            </ul>
          </section>
          <section aria-label="Steps (review)">
            <h3>Steps</h3>
            <ol className="review-list">
              {review.steps.map((e) => (
                <Entry key={`${e.change}-${e.id}`} entry={e} ordered />
              ))}
            </ol>
          </section>
          {review.notes.length > 0 && (
            <section aria-label="Notes added">
              <h3>Notes added</h3>
              <ul className="review-list">
                {review.notes.map((n, i) => (
                  <li key={i} className="review-entry added">
                    <span className="chip change-added">new</span> <ins>{n}</ins>
                  </li>
                ))}
              </ul>
            </section>
          )}
        </div>
      ) : (
        <div role="tabpanel" className="end-state">
          {review.endState ? (
            <>
              <h3>
                {review.endState.title}{' '}
                <span className="muted">
                  (version {review.endState.version ?? 0}
                  {review.endState.servings
                    ? `, ${review.endState.servings} ${review.endState.servings === 1 ? 'serving' : 'servings'}`
                    : ''}
                  )
                </span>
              </h3>
              <h4>Ingredients</h4>
              <ul>
                {review.endState.ingredients.map((i) => (
                  <li key={i.id}>{i.text}</li>
                ))}
              </ul>
              <h4>Steps</h4>
              <ol>
                {review.endState.steps.map((s) => (
                  <li key={s.id}>
                    {s.text}
                    {s.status === 'done' ? ' (done)' : ''}
                  </li>
                ))}
              </ol>
              {review.endState.notes && review.endState.notes.length > 0 && (
                <>
                  <h4>Notes</h4>
                  <ul>
                    {review.endState.notes.map((n, i) => (
                      <li key={i}>{n}</li>
                    ))}
                  </ul>
                </>
              )}
            </>
          ) : (
            <p className="muted">No end state given.</p>
          )}
        </div>
      )}
      {error && (
        <p role="alert" className="banner error">
          {error}
        </p>
      )}
      <div className="actions">
        <button type="button" disabled={busy} onClick={() => decide('accept')}>
          Accept changes
        </button>
        <button type="button" className="danger" disabled={busy} onClick={() => decide('reject')}>
          Reject changes
        </button>
      </div>
    </article>
  );
}
