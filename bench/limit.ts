// The limit a Brigade turn is judged against (issue 33): what Temporal must cost for a turn (the bare floor's
// turn, measured) plus what the step's own work must cost (the same activities run in-process, measured), for
// CPU per lookup turn (whole stack, per process and per thread of the bench's process) and for the lone turn.
// bench/turns.ts measures every side once per round, interleaved, and reports the median of each round's
// figures and ratios, so that one noisy window on a shared machine cannot decide.
// Beside the limit, Brigade is set against the floor-local side (issue 43): the floor with its step as a local
// activity, the cheapest turn of the shape Brigade's own (its model step inside the workflow task), and against
// the local limit (that floor plus the in-process step). Since issue 49 the local limit is the one judged; the
// regular floor's limit is reported beside it, and so is bare-turn, the local limit run as one program (that floor's
// local activity doing the in-process step's work): what a turn of this shape carries here, built plainly.

/** One side's figures in one round; CPU in ms per lookup turn of its closed loop, latencies in ms (p50). */
export interface SideFigures {
  /** turns/s over its closed loops (lookup + chat) */
  capacity: number;
  cpu: number;
  /** CPU per process group: the bench's process (node), the Temporal server, PostgreSQL */
  groups: Record<string, number>;
  /** CPU per thread kind of the bench's process: main, workflow thread, core (Rust), V8/libuv */
  threads: Record<string, number>;
  lone: number;
  closedP50: number;
  /** per lookup turn of its closed loop: activations, codec calls, payload bytes, SQL statements, GCs (turn-counts.ts) */
  counts?: Record<string, number>;
}

export const SIDES = ['Brigade', 'floor', 'floor-local', 'bare-turn', 'ai-sdk', 'in-process'] as const;
export type SideName = (typeof SIDES)[number];
export type RoundFigures = Partial<Record<SideName, SideFigures>>;

export interface Limit {
  cpu: number;
  lone: number;
  groups: Record<string, number>;
  threads: Record<string, number>;
}

export interface Ratios {
  /** Brigade / limit */
  cpu: number;
  lone: number;
  groups: Record<string, number>;
  threads: Record<string, number>;
  /** Brigade's capacity / the floor's, / the peer's */
  capacityToFloor: number;
  capacityToPeer: number;
  /** Brigade / the local-activity floor (NaN without it) */
  toLocalFloor: SideRatios;
  /** the local-activity floor / the regular floor: what the shape alone saves */
  localFloorToFloor: SideRatios;
  /** Brigade / bare-turn, the local limit run as one program (NaN without it) */
  toBareTurn: SideRatios;
  /** bare-turn's capacity / the peer's: what a program of Brigade's shape built plainly carries here, against the peer */
  bareTurnCapacityToPeer: number;
  /** Brigade / the local limit (the local-activity floor + the in-process step; NaN without it): what issue 49 judges */
  toLocalLimit: { cpu: number; lone: number; groups: Record<string, number>; threads: Record<string, number> };
}

/** One side's figures over another's, in one round. */
export interface SideRatios {
  cpu: number;
  lone: number;
  capacity: number;
  groups: Record<string, number>;
  threads: Record<string, number>;
}

const sum = (a: Record<string, number>, b: Record<string, number>) =>
  Object.fromEntries([...new Set([...Object.keys(a), ...Object.keys(b)])].map((key) => [key, (a[key] ?? 0) + (b[key] ?? 0)]));

const divide = (a: Record<string, number>, b: Record<string, number>) =>
  Object.fromEntries(Object.keys(a).map((key) => [key, a[key]! / (b[key] ?? NaN)]));

/** The floor plus the in-process step; undefined without both. */
export const limitOf = (round: RoundFigures): Limit | undefined => limitOver(round, 'floor');
/** The local-activity floor plus the in-process step (reported, no target); undefined without both. */
export const localLimitOf = (round: RoundFigures): Limit | undefined => limitOver(round, 'floor-local');

function limitOver(round: RoundFigures, floorSide: 'floor' | 'floor-local'): Limit | undefined {
  const { [floorSide]: floor, 'in-process': step } = round;
  if (!floor || !step) return undefined;
  return {
    cpu: floor.cpu + step.cpu,
    lone: floor.lone + step.lone,
    groups: sum(floor.groups, step.groups),
    threads: sum(floor.threads, step.threads),
  };
}

function sideRatios(a: SideFigures | undefined, b: SideFigures | undefined): SideRatios {
  if (!a || !b) return { cpu: NaN, lone: NaN, capacity: NaN, groups: {}, threads: {} };
  return {
    cpu: a.cpu / b.cpu,
    lone: a.lone / b.lone,
    capacity: a.capacity / b.capacity,
    groups: divide(a.groups, b.groups),
    threads: divide(a.threads, b.threads),
  };
}

export function ratiosOf(round: RoundFigures): Ratios | undefined {
  const limit = limitOf(round);
  const brigade = round.Brigade;
  if (!limit || !brigade) return undefined;
  const localLimit = localLimitOf(round);
  return {
    cpu: brigade.cpu / limit.cpu,
    lone: brigade.lone / limit.lone,
    groups: divide(brigade.groups, limit.groups),
    threads: divide(brigade.threads, limit.threads),
    capacityToFloor: brigade.capacity / (round.floor?.capacity ?? NaN),
    capacityToPeer: brigade.capacity / (round['ai-sdk']?.capacity ?? NaN),
    toLocalFloor: sideRatios(brigade, round['floor-local']),
    localFloorToFloor: sideRatios(round['floor-local'], round.floor),
    toBareTurn: sideRatios(brigade, round['bare-turn']),
    bareTurnCapacityToPeer: (round['bare-turn']?.capacity ?? NaN) / (round['ai-sdk']?.capacity ?? NaN),
    toLocalLimit: {
      cpu: brigade.cpu / (localLimit?.cpu ?? NaN),
      lone: brigade.lone / (localLimit?.lone ?? NaN),
      groups: localLimit ? divide(brigade.groups, localLimit.groups) : {},
      threads: localLimit ? divide(brigade.threads, localLimit.threads) : {},
    },
  };
}

export function median(values: number[]): number {
  const sorted = values.filter((value) => Number.isFinite(value)).sort((a, b) => a - b);
  if (!sorted.length) return NaN;
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** The median of every number in a list of objects of one shape, field by field (nested records included). */
export function medianOf<T>(items: T[]): T | undefined {
  if (!items.length) return undefined;
  const walk = (values: unknown[]): unknown => {
    // a process or thread under the probe's threshold in one round is absent from it: it counts as 0 there
    if (values.every((value) => typeof value === 'number' || value === undefined))
      return median(values.map((value) => value ?? 0) as number[]);
    const records = values.filter((value): value is Record<string, unknown> => typeof value === 'object' && value !== null);
    const keys = [...new Set(records.flatMap((record) => Object.keys(record)))];
    return Object.fromEntries(keys.map((key) => [key, walk(records.map((record) => record[key]))]));
  };
  return walk(items) as T;
}
