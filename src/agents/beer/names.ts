// Brewery names and US states as the beer finder compares and sends them. Pure, so the recommendation
// workflow and the tools share one definition.

// Longest first, so "Brewing Company" is removed whole rather than leaving "Brewing".
const SUFFIXES = [' brewing company', ' brewing co', ' brewery', ' brewing', ' brewpub', ' co'];

/**
 * The name history filtering compares: lower case, spaces collapsed, trailing punctuation dropped, and the
 * common suffixes removed from the end only ("Stone Brewing Co" and "Stone Brewing" are both "stone", while
 * "Brewery Ommegang" keeps its first word). A name that would become empty stays as it is.
 */
export function simplifyBreweryName(name: string): string {
  let simple = name
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/[.,;:!]+$/, '')
    .trim();
  for (let changed = true; changed;) {
    changed = false;
    for (const suffix of SUFFIXES) {
      if (simple.endsWith(suffix) && simple.length > suffix.length) {
        simple = simple.slice(0, -suffix.length).replace(/[.,;:!\s-]+$/, '');
        changed = true;
        break;
      }
    }
  }
  return simple;
}

// What follows a brand in a location's name: "Stone Brewing World Bistro & Gardens- Liberty Station",
// "Ballast Point Brewing Co / Home Brew Mart", "Karl Strauss Brewing Co - 4S Ranch".
const LOCATION_SEPARATOR = /\s*(?:\s-|-\s|\s\/|\/\s|\s\||\s@\s)/;
const BREWING_WORD = /\s(?:brewing|brewery|brewpub|brewhouse|beer|beers)\b/;

/**
 * The names a brewery goes by, as history filtering compares them: its whole simplified name, the name before
 * a location ("Ballast Point Brewing Company - Little Italy": "ballast point"), and the brand before its first
 * brewing word ("Stone Brewing World Bistro": "stone"). So a bar that buys from Stone Brewing, or is Ballast
 * Point itself, is not offered another of their locations. "Stone Cow Brewery" stays "stone cow".
 */
export function brandKeys(name: string): string[] {
  const whole = simplifyBreweryName(name);
  const beforeLocation = simplifyBreweryName(name.split(LOCATION_SEPARATOR)[0] ?? name);
  const at = beforeLocation.search(BREWING_WORD);
  const brand = at > 0 ? beforeLocation.slice(0, at).trim() : beforeLocation;
  return [...new Set([whole, beforeLocation, brand].filter(Boolean))];
}

/** Whether `name` is one of `history`, or another location of one of its brands. */
export function inHistory(name: string, history: ReadonlySet<string>): boolean {
  return brandKeys(name).some((key) => history.has(key));
}

export const historySet = (history: readonly string[]): Set<string> => new Set(history.flatMap(brandKeys));

/** USPS codes to the names OpenBreweryDB's by_state takes (DC included). */
export const US_STATES: Readonly<Record<string, string>> = {
  AL: 'Alabama',
  AK: 'Alaska',
  AZ: 'Arizona',
  AR: 'Arkansas',
  CA: 'California',
  CO: 'Colorado',
  CT: 'Connecticut',
  DE: 'Delaware',
  DC: 'District of Columbia',
  FL: 'Florida',
  GA: 'Georgia',
  HI: 'Hawaii',
  ID: 'Idaho',
  IL: 'Illinois',
  IN: 'Indiana',
  IA: 'Iowa',
  KS: 'Kansas',
  KY: 'Kentucky',
  LA: 'Louisiana',
  ME: 'Maine',
  MD: 'Maryland',
  MA: 'Massachusetts',
  MI: 'Michigan',
  MN: 'Minnesota',
  MS: 'Mississippi',
  MO: 'Missouri',
  MT: 'Montana',
  NE: 'Nebraska',
  NV: 'Nevada',
  NH: 'New Hampshire',
  NJ: 'New Jersey',
  NM: 'New Mexico',
  NY: 'New York',
  NC: 'North Carolina',
  ND: 'North Dakota',
  OH: 'Ohio',
  OK: 'Oklahoma',
  OR: 'Oregon',
  PA: 'Pennsylvania',
  RI: 'Rhode Island',
  SC: 'South Carolina',
  SD: 'South Dakota',
  TN: 'Tennessee',
  TX: 'Texas',
  UT: 'Utah',
  VT: 'Vermont',
  VA: 'Virginia',
  WA: 'Washington',
  WV: 'West Virginia',
  WI: 'Wisconsin',
  WY: 'Wyoming',
};

const BY_NAME = new Map(Object.values(US_STATES).map((name) => [name.toLowerCase(), name]));

/** A state code or name ("CA", "ca", "california", "new_york", "Washington DC") as the state's name. */
export function stateName(input: string): string | undefined {
  const text = input.trim().replace(/_/g, ' ').replace(/\s+/g, ' ');
  const code = US_STATES[text.toUpperCase().replace(/\./g, '')];
  if (code) return code;
  const lower = text.toLowerCase();
  if (lower === 'washington dc' || lower === 'washington d.c.') return US_STATES.DC;
  return BY_NAME.get(lower);
}

/** The by_city / by_state form: OpenBreweryDB takes spaces as underscores. */
export const apiPlaceName = (value: string): string => value.trim().toLowerCase().replace(/\s+/g, '_');
