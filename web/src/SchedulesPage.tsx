// Agents on a schedule (issue 48): the caller's schedules (agent, text, when, next run, last run with a link to
// its conversation, paused and why), a form that makes one, Pause/Resume, and Delete after a question.
import { useCallback, useEffect, useState } from 'react';
import { ApiError, api } from './api';
import { agentLabel } from './agents/registry';
import { ConfirmDialog } from './ConfirmDialog';
import { followLink } from './router';

interface LastRun {
  at: string;
  outcome: 'sent' | 'skipped' | 'paused' | 'failed' | 'gone';
  conversationId?: string;
  reason?: string;
}

interface Schedule {
  id: string;
  agent: string;
  text: string;
  every: string | null;
  cron: string | null;
  conversationId: string | null;
  paused: boolean;
  pausedReason: string | null;
  nextRunAt: string | null;
  lastRun: LastRun | null;
}

interface Choice {
  id: string;
  agent: string;
  title: string;
}

/** The list is read again this often, so its next and last runs follow the schedules as they run. */
const REFRESH_MS = 5_000;

const when = (iso: string) => new Date(iso).toLocaleString();
const OUTCOMES: Record<LastRun['outcome'], string> = {
  sent: 'Sent',
  skipped: 'Skipped',
  paused: 'Paused',
  failed: 'Failed',
  gone: 'Gone',
};

export function SchedulesPage() {
  const [schedules, setSchedules] = useState<Schedule[]>();
  const [agents, setAgents] = useState<string[]>([]);
  const [conversations, setConversations] = useState<Choice[]>([]);
  const [agent, setAgent] = useState('');
  const [text, setText] = useState('');
  const [kind, setKind] = useState<'every' | 'cron'>('every');
  const [spec, setSpec] = useState('1h');
  const [into, setInto] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [deleting, setDeleting] = useState<Schedule>();
  const [deleteBusy, setDeleteBusy] = useState(false);
  const [deleteError, setDeleteError] = useState<string>();

  const load = useCallback(() => {
    api<{ schedules: Schedule[] }>('GET', '/v1/schedules')
      .then((body) => setSchedules(body.schedules))
      .catch((e: ApiError) => setError(e.message));
  }, []);
  useEffect(() => {
    load();
    const timer = setInterval(load, REFRESH_MS);
    return () => clearInterval(timer);
  }, [load]);
  useEffect(() => {
    api<{ agents: { name: string; allowed: boolean }[] }>('GET', '/v1/meta')
      .then((meta) => {
        const allowed = meta.agents.filter((a) => a.allowed).map((a) => a.name);
        setAgents(allowed);
        setAgent((now) => now || allowed[0] || '');
      })
      .catch(() => setAgents([]));
    api<{ conversations: Choice[] }>('GET', '/v1/conversations?limit=50')
      .then((body) => setConversations(body.conversations))
      .catch(() => setConversations([]));
  }, []);

  async function create(event: React.FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await api('POST', '/v1/schedules', { agent, text: text.trim(), [kind]: spec.trim(), ...(into ? { conversationId: into } : {}) });
      setText('');
      setInto('');
      load();
    } catch (e) {
      setError((e as ApiError).message);
    } finally {
      setBusy(false);
    }
  }

  async function setPaused(schedule: Schedule, paused: boolean) {
    setError(undefined);
    try {
      await api('PATCH', `/v1/schedules/${encodeURIComponent(schedule.id)}`, { paused });
      load();
    } catch (e) {
      setError((e as ApiError).message);
    }
  }

  async function remove(schedule: Schedule) {
    setDeleteBusy(true);
    setDeleteError(undefined);
    try {
      await api('DELETE', `/v1/schedules/${encodeURIComponent(schedule.id)}`);
      setDeleting(undefined);
      load();
    } catch (e) {
      setDeleteError((e as ApiError).message);
    } finally {
      setDeleteBusy(false);
    }
  }

  return (
    <section className="schedules">
      <h1>Schedules</h1>
      <p>
        A schedule sends the same message to an agent as you, every so often or at set times (cron, UTC): into a new conversation each time,
        or into one of yours. A run that finds something waiting for you there is skipped; one that needs your approval waits for it. A
        schedule pauses itself when you may no longer use its agent.
      </p>
      {error && (
        <p role="alert" className="banner error">
          {error}
        </p>
      )}
      {schedules && schedules.length === 0 && <p>You have no schedules.</p>}
      {schedules && schedules.length > 0 && (
        <ul className="schedule-list" aria-label="Your schedules">
          {schedules.map((schedule) => (
            <li key={schedule.id} className="schedule">
              <div className="schedule-head">
                <strong>{agentLabel(schedule.agent)}</strong>
                <span className="schedule-spec">{schedule.every ? `every ${schedule.every}` : `cron ${schedule.cron} (UTC)`}</span>
                {schedule.paused && <span className="chip">Paused</span>}
              </div>
              <p className="schedule-text">{schedule.text}</p>
              {schedule.pausedReason && <p className="schedule-reason">{schedule.pausedReason}</p>}
              <dl>
                <dt>Next run</dt>
                <dd>{schedule.nextRunAt ? when(schedule.nextRunAt) : '—'}</dd>
                <dt>Last run</dt>
                <dd>{schedule.lastRun ? <LastRunText run={schedule.lastRun} /> : 'not yet'}</dd>
              </dl>
              <div className="actions">
                <button type="button" className="secondary" onClick={() => void setPaused(schedule, !schedule.paused)}>
                  {schedule.paused ? 'Resume' : 'Pause'}
                </button>
                <button
                  type="button"
                  className="secondary"
                  onClick={() => {
                    setDeleteError(undefined);
                    setDeleting(schedule);
                  }}
                >
                  Delete
                </button>
              </div>
            </li>
          ))}
        </ul>
      )}
      <h2>Make a schedule</h2>
      <form onSubmit={create} aria-label="Make a schedule">
        <label htmlFor="schedule-agent">Agent</label>
        <select
          id="schedule-agent"
          value={agent}
          onChange={(e) => {
            setAgent(e.target.value);
            // a conversation is of one agent: the choice goes with it
            setInto('');
          }}
        >
          {agents.map((name) => (
            <option key={name} value={name}>
              {agentLabel(name)}
            </option>
          ))}
        </select>
        <label htmlFor="schedule-text">Message</label>
        <textarea id="schedule-text" value={text} maxLength={20_000} required rows={2} onChange={(e) => setText(e.target.value)} />
        <fieldset className="schedule-when">
          <legend>When</legend>
          <label className="option">
            <input type="radio" name="schedule-kind" checked={kind === 'every'} onChange={() => (setKind('every'), setSpec('1h'))} /> Every
          </label>
          <label className="option">
            <input type="radio" name="schedule-kind" checked={kind === 'cron'} onChange={() => (setKind('cron'), setSpec('0 9 * * 1'))} />{' '}
            Cron (UTC)
          </label>
          <input
            aria-label={kind === 'every' ? 'Every (e.g. 30s, 15m, 24h, 7d)' : 'Cron expression (minute hour day month weekday)'}
            value={spec}
            required
            onChange={(e) => setSpec(e.target.value)}
          />
        </fieldset>
        <label htmlFor="schedule-into">Into</label>
        <select id="schedule-into" value={into} onChange={(e) => setInto(e.target.value)}>
          <option value="">A new conversation each time</option>
          {conversations
            .filter((c) => c.agent === agent)
            .map((c) => (
              <option key={c.id} value={c.id}>
                {c.title}
              </option>
            ))}
        </select>
        <button type="submit" disabled={busy || !agent || !text.trim() || !spec.trim()}>
          Make a schedule
        </button>
      </form>
      <ConfirmDialog
        open={!!deleting}
        heading="Delete this schedule?"
        action="Delete"
        busyAction="Deleting…"
        busy={deleteBusy}
        error={deleteError}
        onClose={() => setDeleting(undefined)}
        onConfirm={() => deleting && void remove(deleting)}
      >
        <p>It runs no more. The conversations it made stay.</p>
      </ConfirmDialog>
    </section>
  );
}

function LastRunText({ run }: { run: LastRun }) {
  const path = run.conversationId ? `/c/${run.conversationId}` : undefined;
  return (
    <>
      {OUTCOMES[run.outcome]} {when(run.at)}
      {path && (
        <>
          {' · '}
          <a href={path} onClick={(e) => followLink(e, path)}>
            its conversation
          </a>
        </>
      )}
      {run.reason && run.outcome !== 'paused' && <span className="schedule-reason"> — {run.reason}</span>}
    </>
  );
}
