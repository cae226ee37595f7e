// An approval: the tool's arguments, approved as they are, rejected with a reason the agent reads, or edited
// in a form built from the tool's declared parameters (the API's field errors shown on their fields).
import { useState } from 'react';
import type { PendingViewProps } from './agentHome';
import { fieldErrorsOf, type FieldError } from './api';
import { Countdown } from './Countdown';
import { mcpServerOf } from './McpQuestion';
import type { JsonSchema } from './types';
import { useDecision } from './useDecision';
import { approvalView, callSentence, humanName, plainError, plainValue } from './toolWords';

export function ApprovalCard({ item, schema: declared, onDecide, agent = '' }: PendingViewProps) {
  // An MCP tool is not in the API's list of the agent's tools: its item carries its parameters.
  const schema = declared ?? (item.details?.schema as JsonSchema | undefined);
  const mcp = mcpServerOf(item);
  const { busy, error, run } = useDecision(onDecide);
  const [mode, setMode] = useState<'view' | 'reject' | 'edit'>('view');
  // approved here: the tool runs now (a save pipeline can take a while), so the card stops asking
  const [approved, setApproved] = useState<'approve' | 'edit'>();
  const approve = async (body: Record<string, unknown> & { decision: 'approve' | 'edit' }) => {
    setApproved(body.decision);
    if (!(await run(body))) setApproved(undefined);
  };
  const [reason, setReason] = useState('');
  const [values, setValues] = useState<Record<string, string>>(() =>
    Object.fromEntries(Object.entries(item.args).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)])),
  );
  const fieldErrors: FieldError[] = error && (error.status === 422 || error.status === 400) ? fieldErrorsOf(error) : [];
  const properties = schema?.properties ?? Object.fromEntries(Object.keys(item.args).map((k) => [k, { type: 'string' } as JsonSchema]));
  const formLevel = fieldErrors.filter((f) => !(f.field in properties));
  const headingId = `approval-${item.id}`;
  // what the call touches, in the agent's layout (the order, current → new, the recipe): in place of the arguments
  const touches = mcp ? undefined : approvalView(agent, item.tool, item.args, item.preview);

  if (approved) {
    return (
      <article className="pending-card approval approved" aria-labelledby={headingId}>
        <h2 id={headingId}>
          {approved === 'edit' ? 'Approved with your changes' : 'Approved'}:{' '}
          {mcp ? <code>{mcp.tool}</code> : callSentence(agent, item.tool, item.args)}
        </h2>
        <p role="status">
          {busy ? 'Working on it now; its steps show in the conversation as they run.' : 'Done; the result is in the conversation.'}
        </p>
      </article>
    );
  }

  return (
    <article className="pending-card approval" aria-labelledby={headingId}>
      {mcp ? (
        <h2 id={headingId}>
          Approve <code>{mcp.tool}</code> from MCP server <strong data-testid="mcp-server">{mcp.server}</strong>?
        </h2>
      ) : (
        <h2 id={headingId}>Approve: {callSentence(agent, item.tool, item.args)}?</h2>
      )}
      {item.prompt && <p>{item.prompt}</p>}
      {touches ?? (
        <dl className="args">
          {Object.entries(item.args).map(([k, v]) => (
            <div key={k}>
              <dt>{humanName(k)}</dt>
              <dd>{plainValue(v)}</dd>
            </div>
          ))}
        </dl>
      )}
      <Countdown expiresAt={item.expiresAt} label="Decide within" />
      {error && (fieldErrors.length === 0 || error.status !== 422) && (
        <p role="alert" className="banner error">
          {error.message}
        </p>
      )}
      {mode === 'view' && (
        <div className="actions">
          {item.decisions.includes('approve') && (
            <button type="button" disabled={busy} onClick={() => approve({ pendingId: item.id, decision: 'approve' })}>
              Approve
            </button>
          )}
          {item.decisions.includes('reject') && (
            <button type="button" className="danger" disabled={busy} onClick={() => setMode('reject')}>
              Reject…
            </button>
          )}
          {item.decisions.includes('edit') && (
            <button type="button" className="secondary" disabled={busy} onClick={() => setMode('edit')}>
              Change…
            </button>
          )}
        </div>
      )}
      {mode === 'reject' && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            run({ pendingId: item.id, decision: 'reject', ...(reason.trim() ? { reason: reason.trim() } : {}) });
          }}
        >
          <label htmlFor={`reason-${item.id}`}>Reason (the agent reads it)</label>
          <textarea id={`reason-${item.id}`} value={reason} maxLength={2000} onChange={(e) => setReason(e.target.value)} autoFocus />
          <div className="actions">
            <button type="submit" className="danger" disabled={busy}>
              Reject
            </button>
            <button type="button" className="secondary" onClick={() => setMode('view')}>
              Back
            </button>
          </div>
        </form>
      )}
      {mode === 'edit' && (
        <form
          aria-label={`Edit: ${callSentence(agent, item.tool, item.args)}`}
          onSubmit={(e) => {
            e.preventDefault();
            approve({ pendingId: item.id, decision: 'edit', args: argsFromForm(values, properties) });
          }}
        >
          {formLevel.length > 0 && (
            <p role="alert" className="field-error">
              {formLevel.map((f) => `${f.field === '(arguments)' ? '' : `${humanName(f.field)}: `}${plainError(f.message)}`).join(' ')}
            </p>
          )}
          {Object.entries(properties).map(([name, prop]) => {
            const fieldError = fieldErrors.find((f) => f.field === name);
            const id = `arg-${item.id}-${name}`;
            const required = schema?.required?.includes(name);
            const enumValues = prop.enum ?? prop.anyOf?.flatMap((a) => a.enum ?? []);
            return (
              <div className={`field ${fieldError ? 'invalid' : ''}`} key={name}>
                <label htmlFor={id}>
                  {humanName(name)}
                  {required ? ' (required)' : ''}
                </label>
                {enumValues && enumValues.length > 0 ? (
                  <select
                    id={id}
                    value={values[name] ?? ''}
                    onChange={(e) => setValues({ ...values, [name]: e.target.value })}
                    aria-invalid={!!fieldError}
                    aria-describedby={fieldError ? `${id}-error` : undefined}
                  >
                    {!required && <option value="">(none)</option>}
                    {enumValues.map((v) => (
                      <option key={String(v)} value={String(v)}>
                        {String(v)}
                      </option>
                    ))}
                  </select>
                ) : (values[name]?.length ?? 0) > 60 || /raw|text|notes|description/i.test(name) ? (
                  <textarea
                    id={id}
                    rows={4}
                    value={values[name] ?? ''}
                    onChange={(e) => setValues({ ...values, [name]: e.target.value })}
                    aria-invalid={!!fieldError}
                    aria-describedby={
                      [prop.description ? `${id}-help` : '', fieldError ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined
                    }
                  />
                ) : (
                  <input
                    id={id}
                    type={typeOf(prop) === 'number' || typeOf(prop) === 'integer' ? 'number' : 'text'}
                    value={values[name] ?? ''}
                    onChange={(e) => setValues({ ...values, [name]: e.target.value })}
                    aria-invalid={!!fieldError}
                    aria-describedby={
                      [prop.description ? `${id}-help` : '', fieldError ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined
                    }
                  />
                )}
                {prop.description && <small id={`${id}-help`}>{prop.description}</small>}
                {fieldError && (
                  <p id={`${id}-error`} className="field-error" role="alert">
                    {plainError(fieldError.message)}
                  </p>
                )}
              </div>
            );
          })}
          <div className="actions">
            <button type="submit" disabled={busy}>
              Approve with these changes
            </button>
            <button type="button" className="secondary" onClick={() => setMode('view')}>
              Back
            </button>
          </div>
        </form>
      )}
    </article>
  );
}

function typeOf(prop: JsonSchema): string | undefined {
  const t = prop.type ?? prop.anyOf?.map((a) => a.type).find((x) => x && x !== 'null');
  return Array.isArray(t) ? t.find((x) => x !== 'null') : t;
}

/** Form strings back into arguments: empty optional fields are left out, numbers and JSON are parsed. */
function argsFromForm(values: Record<string, string>, properties: Record<string, JsonSchema>): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries(values)) {
    const type = typeOf(properties[name] ?? {});
    if (raw === '') continue;
    if (type === 'number' || type === 'integer') args[name] = Number(raw);
    else if (type === 'boolean') args[name] = raw === 'true';
    else if (type === 'object' || type === 'array') {
      try {
        args[name] = JSON.parse(raw);
      } catch {
        args[name] = raw;
      }
    } else args[name] = raw;
  }
  return args;
}
