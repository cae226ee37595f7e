// MCP in the web client: an approval of an MCP tool names its server (mcpServerOf), and a server's question
// in the middle of a call (elicitation) is a form made from the JSON Schema it sent (elicitationForm.ts):
// every type the spec's form schema allows, pre-filled with its defaults; accept with the answer, decline,
// or cancel, before the deadline. Brigade's refusal of an answer (422) is shown at each field it names.
import { useState } from 'react';
import { fieldErrorsOf } from './api';
import type { PendingViewProps } from './agentHome';
import { Countdown } from './Countdown';
import { answerOf, type Choice, controlOf, type FieldValue, initialValues } from './elicitationForm';
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
  const [values, setValues] = useState<Record<string, FieldValue>>(() => initialValues(properties));
  const set = (name: string, value: FieldValue) => setValues((current) => ({ ...current, [name]: value }));
  // A refusal names a field, or an item of it (`allergies.1`): either is shown at the field.
  const fieldErrors = error?.status === 422 ? fieldErrorsOf(error).map((f) => ({ ...f, field: f.field.split('.')[0]! })) : [];
  const atFields = fieldErrors.filter((f) => f.field in properties);
  const headingId = `question-${item.id}`;
  return (
    <article className="pending-card question" aria-labelledby={headingId}>
      <h2 id={headingId}>{item.prompt ?? 'A question'}</h2>
      <p className="muted">
        Asked by MCP server <strong data-testid="mcp-server">{mcpServerOf(item)?.server ?? '?'}</strong> while running{' '}
        <code>{mcpServerOf(item)?.tool ?? item.tool}</code>
      </p>
      <Countdown expiresAt={item.expiresAt} label="Answer within" />
      {error && atFields.length === 0 && (
        <p role="alert" className="banner error">
          {error.message}
        </p>
      )}
      <form
        // Brigade checks the answer against the server's schema and names each field it refuses: the
        // browser's own bubbles would say less, and differently for each type.
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          run({ pendingId: item.id, decision: 'accept', args: answerOf(properties, values) });
        }}
      >
        {Object.entries(properties).map(([name, prop]) => (
          <QuestionField
            key={name}
            id={`answer-${item.id}-${name}`}
            name={name}
            prop={prop}
            required={!!schema.required?.includes(name)}
            value={values[name]}
            onChange={(value) => set(name, value)}
            error={atFields.filter((f) => f.field === name).map((f) => f.message)}
          />
        ))}
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

interface FieldProps {
  id: string;
  name: string;
  prop: JsonSchema;
  required: boolean;
  value: FieldValue | undefined;
  onChange(value: FieldValue): void;
  error: string[];
}

function QuestionField({ id, name, prop, required, value, onChange, error }: FieldProps) {
  const control = controlOf(prop);
  const label = `${prop.title ?? name}${required ? ' (required)' : ''}`;
  const helpId = prop.description ? `${id}-help` : undefined;
  const errorId = error.length ? `${id}-error` : undefined;
  const described = [helpId, errorId].filter(Boolean).join(' ') || undefined;
  const help = prop.description && <small id={helpId}>{prop.description}</small>;
  const problem = errorId && (
    <p id={errorId} className="field-error" role="alert">
      {error.join('; ')}
    </p>
  );
  const text = typeof value === 'string' ? value : '';

  if (control.kind === 'choices') {
    const picked = Array.isArray(value) ? value : [];
    const bounds = [
      prop.minItems !== undefined ? `at least ${prop.minItems}` : '',
      prop.maxItems !== undefined ? `at most ${prop.maxItems}` : '',
    ].filter(Boolean);
    return (
      <fieldset className={`field choices ${errorId ? 'invalid' : ''}`} aria-describedby={described}>
        <legend>
          {label}
          {bounds.length > 0 && <span className="muted"> (choose {bounds.join(', ')})</span>}
        </legend>
        {control.choices.map((choice: Choice) => (
          <label key={choice.value} className="checkbox">
            <input
              type="checkbox"
              checked={picked.includes(choice.value)}
              onChange={(e) =>
                onChange(
                  e.target.checked
                    ? control.choices.map((c) => c.value).filter((v) => v === choice.value || picked.includes(v))
                    : picked.filter((v) => v !== choice.value),
                )
              }
            />{' '}
            {choice.label}
          </label>
        ))}
        {help}
        {problem}
      </fieldset>
    );
  }
  if (control.kind === 'checkbox') {
    return (
      <div className={`field ${errorId ? 'invalid' : ''}`}>
        <label className="checkbox" htmlFor={id}>
          <input
            id={id}
            type="checkbox"
            checked={value === true}
            onChange={(e) => onChange(e.target.checked)}
            aria-describedby={described}
          />{' '}
          {label}
        </label>
        {help}
        {problem}
      </div>
    );
  }
  return (
    <div className={`field ${errorId ? 'invalid' : ''}`}>
      <label htmlFor={id}>{label}</label>
      {control.kind === 'choice' ? (
        <select id={id} value={text} onChange={(e) => onChange(e.target.value)} aria-invalid={!!errorId} aria-describedby={described}>
          {(!required || text === '') && <option value="">(choose)</option>}
          {control.choices.map((choice) => (
            <option key={choice.value} value={choice.value}>
              {choice.label}
            </option>
          ))}
        </select>
      ) : control.kind === 'number' ? (
        <input
          id={id}
          type="number"
          inputMode={control.integer ? 'numeric' : 'decimal'}
          step={control.integer ? 1 : 'any'}
          min={prop.minimum}
          max={prop.maximum}
          value={text}
          onChange={(e) => onChange(e.target.value)}
          aria-invalid={!!errorId}
          aria-describedby={described}
        />
      ) : (
        <input
          id={id}
          type={control.inputType}
          minLength={prop.minLength}
          maxLength={prop.maxLength}
          value={text}
          onChange={(e) => onChange(e.target.value)}
          aria-invalid={!!errorId}
          aria-describedby={described}
        />
      )}
      {help}
      {problem}
    </div>
  );
}
