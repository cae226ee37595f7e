// The eval's tables: a scorecard per agent and behaviour (passed, rate, tokens, cost) and the cases' rows.
import type { CaseResult } from './types.ts';

function table(header: string[], rows: string[][], right: ReadonlySet<number> = new Set()): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (right.has(i) ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

export function money(amount: number | undefined, currency = 'USD'): string {
  if (amount === undefined) return 'n/a';
  return `${currency === 'USD' ? '$' : `${currency} `}${amount.toFixed(6)}`;
}

/** One row per agent and behaviour, then one per agent, then the total. */
export function formatScorecard(results: readonly CaseResult[]): string {
  const groups = new Map<string, CaseResult[]>();
  for (const r of results) {
    const key = `${r.agent}\u0000${r.behaviour}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const row = (agent: string, behaviour: string, rs: readonly CaseResult[]) => {
    const passed = rs.filter((r) => r.pass).length;
    const tokens = rs.reduce((sum, r) => sum + r.usage.inputTokens + r.usage.outputTokens, 0);
    const priced = rs.every((r) => r.cost);
    const cost = priced ? rs.reduce((sum, r) => sum + r.cost!.amount, 0) : undefined;
    return [
      agent,
      behaviour,
      `${passed}/${rs.length}`,
      `${((passed / rs.length) * 100).toFixed(0)} %`,
      String(tokens),
      money(cost, rs[0]?.cost?.currency),
    ];
  };
  const rows: string[][] = [];
  const agents = [...new Set(results.map((r) => r.agent))];
  for (const agent of agents) {
    for (const [key, rs] of groups) if (key.startsWith(`${agent}\u0000`)) rows.push(row(agent, key.split('\u0000')[1]!, rs));
    rows.push(
      row(
        agent,
        '(all)',
        results.filter((r) => r.agent === agent),
      ),
    );
  }
  rows.push(row('total', '', results));
  return table(['agent', 'behaviour', 'passed', 'rate', 'tokens', 'cost'], rows, new Set([2, 3, 4, 5]));
}

export function formatCases(results: readonly CaseResult[], extra?: { header: string; cells: readonly string[] }): string {
  const rows = results.map((r, i) => [
    r.pass ? 'PASS' : 'FAIL',
    ...(extra ? [extra.cells[i]!] : []),
    r.agent,
    r.behaviour,
    r.name,
    r.detail.replace(/\s+/g, ' ').slice(0, 120),
  ]);
  return table(['', ...(extra ? [extra.header] : []), 'agent', 'behaviour', 'case', 'detail'], rows);
}

export function passRate(results: readonly CaseResult[]): number {
  return results.length ? results.filter((r) => r.pass).length / results.length : 0;
}
