// A query's rows as a table a person reads: columns named in words, ids and timestamps left out, each value as
// text (lists joined, nested objects counted), never JSON. Any agent's view of a query result uses it; the table
// scrolls sideways inside its own box, so a 375 px phone never scrolls the page.
import { plural } from './plural';

type Row = Record<string, unknown>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const NUMERIC = /^-?\d{1,15}(\.\d+)?$/;
/** columns a person does not ask about: ids, who owns the row, bookkeeping times, soft-delete flags */
const HIDDEN = /^(id|uuid|user_id|is_deleted)$|_id$|Id$|_at$|At$/;

/** "avg_prep_time" → "Avg prep time" */
export function columnLabel(key: string): string {
  const words = key
    .replace(/[_-]+/g, ' ')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .trim();
  return words ? words[0]!.toUpperCase() + words.slice(1) : key;
}

/** A cell's value as text: never JSON, never an id. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : value.toFixed(2).replace(/\.?0+$/, '');
  // PostgreSQL's numeric and bigint arrive as strings ("5.0000000000000000"): read as the numbers they are
  if (typeof value === 'string' && NUMERIC.test(value)) return cellText(Number(value));
  if (typeof value === 'string') return UUID.test(value) ? '' : value;
  if (Array.isArray(value)) {
    if (value.every((v) => typeof v !== 'object' || v === null)) return value.map(cellText).filter(Boolean).join(', ');
    const names = value.map((v) => (v && typeof v === 'object' ? cellText((v as Row).name ?? (v as Row).title) : '')).filter(Boolean);
    return names.length === value.length ? names.join(', ') : plural(value.length, 'item');
  }
  const inner = value as Row;
  return cellText(inner.name ?? inner.title) || plural(Object.keys(inner).length, 'detail');
}

/** The columns shown: the rows' keys in their order, less the hidden ones and those no row fills. */
export function shownColumns(rows: Row[]): string[] {
  const keys = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  return keys.filter((key) => !HIDDEN.test(key) && rows.some((row) => cellText(row[key]) !== ''));
}

export function RowsTable({ rows, caption }: { rows: Row[]; caption: string }) {
  const columns = shownColumns(rows);
  if (rows.length === 0) return <p className="muted">No rows.</p>;
  if (columns.length === 0) return <p className="muted">{plural(rows.length, 'row')}, with nothing to show but ids.</p>;
  const numeric = new Set(
    columns.filter((key) =>
      rows.every((row) => row[key] === null || typeof row[key] === 'number' || (typeof row[key] === 'string' && NUMERIC.test(row[key]))),
    ),
  );
  const [first, ...rest] = columns;
  return (
    // focusable, so a keyboard can scroll it where it overflows
    <div className="table-scroll" tabIndex={0} role="group" aria-label={caption}>
      <table className="result-table">
        <caption>{caption}</caption>
        <thead>
          <tr>
            {columns.map((key) => (
              <th key={key} scope="col">
                {columnLabel(key)}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row, i) => (
            <tr key={i}>
              <th scope="row" className={numeric.has(first!) ? 'num' : undefined}>
                {cellText(row[first!])}
              </th>
              {rest.map((key) => (
                <td key={key} className={numeric.has(key) ? 'num' : undefined}>
                  {cellText(row[key])}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
