// The recommendation workflow's view of a client profile, read from the profile the beer agent's
// get_client_profile_tool returns (the tool's shape), whichever of its location fields are present.
import type { ClientProfile } from './definitions.ts';
import { stateName } from './names.ts';

type Raw = Record<string, unknown>;

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
const text = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() ? value.trim() : undefined);

export function toClientProfile(raw: Raw): ClientProfile | null {
  let city = text(raw.client_city) ?? text(raw.city);
  let state = text(raw.client_state) ?? text(raw.state);
  const combined = text(raw.client_location_city_state);
  if ((!city || !state) && combined) {
    const at = combined.lastIndexOf(',');
    if (at > 0) {
      city ??= combined.slice(0, at).trim();
      state ??= combined.slice(at + 1).trim();
    }
  }
  const clientId = text(raw.client_id);
  if (!clientId || !city || !state) return null;
  const history = strings(raw.brewery_history);
  return {
    client_id: clientId,
    client_name: text(raw.client_name) ?? clientId,
    city,
    state: stateName(state) ?? state,
    top_brewery_types: strings(raw.top3_brewery_types ?? raw.top_brewery_types),
    // The full purchase history when the profile has it; the recent top breweries at least.
    brewery_history: [
      ...new Set([...history, ...strings(raw.top3_breweries_recently), ...(text(raw.client_name) ? [text(raw.client_name)!] : [])]),
    ],
  };
}
