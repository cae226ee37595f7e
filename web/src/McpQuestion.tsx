// MCP in the web client: an approval of an MCP tool names its server (mcpServerOf), and a server's question
// in the middle of a call (elicitation) is a form made from the JSON Schema it sent: accept with the answer,
// decline, or cancel, before the deadline.
import { useState } from 'react';
import { fieldErrorsOf } from './api';
import type { PendingViewProps } from './agentHome';
import { Countdown } from './Countdown';
import type { JsonSchema, PendingItem } from './types';
import { useDecision } from './useDecision';

/** The MCP server and its own tool name, for an item that belongs to an MCP tool. */
export function mcpServerOf(item: PendingItem): { server: string; tool: string } | undefined {
  const server = item.details?.server;
  return typeof server === 'string' ? { server, tool: typeof item.details?.tool === 'string' ? item.details.tool : item.tool } : undefined;
}

export function McpQuestionCard({ item, onDecide }: PendingViewProps) {
  const { busy, error, run } = useDecision(onDecide);
  const schema = (item.details?.schema ?? {}) as JsonSchema;
  const properties = schema.properties ?? {};
  const [values, setValues] = useState<Record<string, string>>({});
  const fieldErrors = error?.status === 422 ? fieldErrorsOf(error) : [];
  const headingId = `question-${item.id}`;
  const answer = () => {
    const content: Record<string, unknown> = {};
    for (const [name, prop] of Object.entries(properties)) {
      const raw = values[name] ?? '';
      if (raw === '') continue;
      const type = Array.isArray(prop.type) ? prop.type[0] : prop.type;
      content[name] = type === 'number' || type === 'integer' ? Number(raw) : type === 'boolean' ? raw === 'true' : raw;
    }
    return content;
  };
  return (
    <article className="pending-card question" aria-labelledby={headingId}>
      <h2 id={headingId}>{item.prompt ?? 'A question'}</h2>
      <p className="muted">
        Asked by MCP server <strong data-testid="mcp-server">{mcpServerOf(item)?.server ?? '?'}</strong> while running{' '}
        <code>{mcpServerOf(item)?.tool ?? item.tool}</code>
      </p>
      <Countdown expiresAt={item.expiresAt} label="Answer within" />
      {error && (
        <p role="alert" className="banner error">
          {error.message}
        </p>
      )}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          run({ pendingId: item.id, decision: 'accept', args: answer() });
        }}
      >
        {Object.entries(properties).map(([name, prop]) => {
          const id = `answer-${item.id}-${name}`;
          const fieldError = fieldErrors.find((f) => f.field === name);
          const type = Array.isArray(prop.type) ? prop.type[0] : prop.type;
          const choices = prop.enum ?? (type === 'boolean' ? [true, false] : undefined);
          return (
            <div className={`field ${fieldError ? 'invalid' : ''}`} key={name}>
              <label htmlFor={id}>
                {name}
                {schema.required?.includes(name) ? ' (required)' : ''}
              </label>
              {choices ? (
                <select id={id} value={values[name] ?? ''} onChange={(e) => setValues({ ...values, [name]: e.target.value })}>
                  <option value="">(choose)</option>
                  {choices.map((v) => (
                    <option key={String(v)} value={String(v)}>
                      {String(v)}
                    </option>
                  ))}
                </select>
              ) : (
                <input
                  id={id}
                  type={type === 'number' || type === 'integer' ? 'number' : 'text'}
                  value={values[name] ?? ''}
                  onChange={(e) => setValues({ ...values, [name]: e.target.value })}
                />
              )}
              {prop.description && <small>{prop.description}</small>}
              {fieldError && (
                <p className="field-error" role="alert">
                  {fieldError.message}
                </p>
              )}
            </div>
          );
        })}
        <div className="actions">
          <button type="submit" disabled={busy}>
            Answer
          </button>
          <button type="button" className="danger" disabled={busy} onClick={() => run({ pendingId: item.id, decision: 'decline' })}>
            Decline
          </button>
          <button type="button" className="secondary" disabled={busy} onClick={() => run({ pendingId: item.id, decision: 'cancel' })}>
            Cancel
          </button>
        </div>
      </form>
    </article>
  );
}
