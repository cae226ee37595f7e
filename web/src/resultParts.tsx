// The small parts every agent's result views and approval layouts are built from (agents/*/views.tsx,
// agents/*/approvals.tsx): reading an untyped result safely and one term of a definition list.
import type { ReactNode } from 'react';

export type Row = Record<string, unknown>;

export const isObject = (v: unknown): v is Row => typeof v === 'object' && v !== null && !Array.isArray(v);
/** a string or a number as text; anything else as nothing */
export const text = (v: unknown): string => (typeof v === 'string' || typeof v === 'number' ? String(v) : '');
const money = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' });
export const price = (v: unknown): string => (typeof v === 'number' && Number.isFinite(v) ? money.format(v) : '');

/** A phone number as a link that dials it; ten bare digits (as OpenBreweryDB gives them) read 858-225-2337. */
export function PhoneLink({ phone }: { phone: string }) {
  const digits = phone.replace(/[^\d+]/g, '');
  if (!/\d/.test(digits)) return <>{phone}</>;
  const shown = /^\d{10}$/.test(phone.trim()) ? phone.trim().replace(/^(\d{3})(\d{3})(\d{4})$/, '$1-$2-$3') : phone;
  return <a href={`tel:${digits}`}>{shown}</a>;
}

/** One term and its value in a `<dl>`; nothing at all when the value is empty, so a card lists what it knows. */
export function Fact({ term, children }: { term: string; children: ReactNode }) {
  if (children === '' || children === undefined || children === null) return null;
  return (
    <div>
      <dt>{term}</dt>
      <dd>{children}</dd>
    </div>
  );
}
