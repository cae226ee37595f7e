// The bar a new beer conversation acts for, chosen by name from the bars this token may act for
// (GET /v1/bars), where people used to type a CLT- id they had to look up. A native select: labelled,
// keyboard operable and read by screen readers without help, with type-ahead on the bar's name.
// Typing an id stays possible (an id read off an invoice, or a list that could not be had), so an empty
// or failed list is never a dead end.
import { useEffect, useState } from 'react';
import type { ApiError } from '../../api';
import type { ClientPicker } from '../../agentHome';
import { type Bar, listBars, placeOf } from './bars';

export const BarPicker: ClientPicker = ({ value, onChange }) => {
  const [bars, setBars] = useState<Bar[]>();
  const [failed, setFailed] = useState<string>();
  const [typing, setTyping] = useState(false);

  useEffect(() => {
    let live = true;
    listBars()
      .then((found) => live && setBars(found))
      .catch((error: ApiError) => live && setFailed(error.message));
    return () => {
      live = false;
    };
  }, []);

  if (!bars && !failed) {
    return (
      <>
        <label htmlFor="new-client">Bar</label>
        <select id="new-client" disabled>
          <option>Loading the bars…</option>
        </select>
      </>
    );
  }

  const listed = bars ?? [];
  if (typing || listed.length === 0) {
    const why = failed
      ? `The list of bars could not be loaded (${failed}). Type the bar's id instead.`
      : listed.length === 0
        ? "No bars are listed for you. If you know the bar's id, type it here."
        : undefined;
    return (
      <>
        <label htmlFor="new-client">Bar id (CLT-…)</label>
        {why && (
          <p id="new-client-why" className="hint">
            {why}
          </p>
        )}
        <input
          id="new-client"
          value={value}
          onChange={(e) => onChange(e.target.value)}
          placeholder="CLT-…"
          aria-describedby={why ? 'new-client-why' : undefined}
          autoComplete="off"
          required
        />
        {listed.length > 0 && (
          <button
            type="button"
            className="link"
            onClick={() => {
              setTyping(false);
              onChange('');
            }}
          >
            Pick the bar from the list instead
          </button>
        )}
      </>
    );
  }

  const chosen = listed.find((bar) => bar.clientId === value);
  return (
    <>
      <label htmlFor="new-client">Bar</label>
      <select
        id="new-client"
        value={chosen ? value : ''}
        onChange={(e) => onChange(e.target.value)}
        aria-describedby="new-client-detail"
        required
      >
        <option value="">Choose a bar…</option>
        {listed.map((bar) => (
          <option key={bar.clientId} value={bar.clientId}>
            {bar.name}
            {placeOf(bar) ? ` — ${placeOf(bar)}` : ''}
          </option>
        ))}
      </select>
      <p id="new-client-detail" className="hint">
        {chosen
          ? [placeOf(chosen), chosen.clientId].filter(Boolean).join(' · ')
          : listed.length === 1
            ? 'The one bar you may act for.'
            : `${listed.length} bars you may act for.`}
      </p>
      <button
        type="button"
        className="link"
        onClick={() => {
          setTyping(true);
          onChange('');
        }}
      >
        Type a bar's id instead
      </button>
    </>
  );
};
