// CPU accounting for bench/turns.ts from Linux /proc (absent elsewhere): the machine, our three services
// (this process, the Temporal server, PostgreSQL, each with its child processes) and this process's threads.
// Other work on the machine (other test runs) shows as the gap between "machine" and the sum of the services.
import fs from 'node:fs';
import os from 'node:os';

export interface CpuSnapshot {
  machineBusy: number;
  machineTotal: number;
  /** ticks per service */
  groups: Map<string, number>;
  /** ticks per thread kind inside this process */
  threads: Map<string, number>;
}

export interface CpuUse {
  /** all of these in % of one core */
  machine: number;
  groups: Record<string, number>;
  threads: Record<string, number>;
}

const THREAD_KINDS: [RegExp, string][] = [
  [/^MainThread$/, 'main'],
  [/^WorkerThread$/, 'workflow thread'],
  // sdk-core's threads; workflow-processing (comm cut to 15 characters) runs its workflow activation stream
  [/^tokio|^core|^temporal|^workflow-proces/i, 'core (Rust)'],
  [/^V8Worker|^DelayedTask|^libuv|^SignalInspector/, 'V8/libuv'],
];

function parseStat(text: string): { comm: string; ppid: number; ticks: number } {
  const close = text.lastIndexOf(')');
  const comm = text.slice(text.indexOf('(') + 1, close);
  const rest = text.slice(close + 2).split(' ');
  return { comm, ppid: Number(rest[1]), ticks: Number(rest[11]) + Number(rest[12]) }; // utime + stime
}

function argsOf(pid: string): string[] {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return [];
  }
}

/** A reader of snapshots; the services are recognised by the ports they were told to listen on. */
export function cpuProbe(
  ports: { temporal?: number; postgres?: number },
  more: { processes?: Record<number, string>; selfLabel?: string } = {},
): () => CpuSnapshot | undefined {
  const roots = new Map<number, string>([[process.pid, more.selfLabel ?? 'node (bench: client + worker)']]);
  for (const [pid, label] of Object.entries(more.processes ?? {})) roots.set(Number(pid), label);
  return () => {
    try {
      const fields = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
      const total = fields.reduce((sum, value) => sum + value, 0);
      const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
      const procs = new Map<number, { ppid: number; ticks: number }>();
      for (const pid of fs.readdirSync('/proc')) {
        if (!/^\d+$/.test(pid)) continue;
        try {
          const { comm, ppid, ticks } = parseStat(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
          procs.set(Number(pid), { ppid, ticks });
          if (roots.has(Number(pid))) continue;
          if (ports.temporal && /^temporal/.test(comm)) {
            const args = argsOf(pid);
            if (args.includes('--port') && args[args.indexOf('--port') + 1] === String(ports.temporal))
              roots.set(Number(pid), 'temporal server');
          } else if (ports.postgres && comm === 'postgres') {
            const args = argsOf(pid);
            if (args.includes('-p') && args[args.indexOf('-p') + 1] === String(ports.postgres)) roots.set(Number(pid), 'postgres');
          }
        } catch {
          // the process ended while we looked
        }
      }
      const groups = new Map<string, number>();
      for (const [pid, proc] of procs) {
        let at: number | undefined = pid;
        let group: string | undefined;
        for (let hops = 0; at !== undefined && at > 1 && hops < 50 && !group; hops += 1) {
          group = roots.get(at);
          at = procs.get(at)?.ppid;
        }
        if (group) groups.set(group, (groups.get(group) ?? 0) + proc.ticks);
      }
      const threads = new Map<string, number>();
      for (const tid of fs.readdirSync('/proc/self/task')) {
        try {
          const { comm, ticks } = parseStat(fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8'));
          const kind = THREAD_KINDS.find(([pattern]) => pattern.test(comm))?.[1] ?? comm;
          threads.set(kind, (threads.get(kind) ?? 0) + ticks);
        } catch {
          // the thread ended while we looked
        }
      }
      return { machineBusy: total - idle, machineTotal: total, groups, threads };
    } catch {
      return undefined;
    }
  };
}

export function cpuBetween(before: CpuSnapshot | undefined, after: CpuSnapshot | undefined): CpuUse | undefined {
  if (!before || !after) return undefined;
  const perCore = (after.machineTotal - before.machineTotal) / os.availableParallelism();
  if (perCore <= 0) return undefined;
  const pct = (ticks: number) => (ticks / perCore) * 100;
  const diff = (a: Map<string, number>, b: Map<string, number>) =>
    Object.fromEntries([...b].map(([name, ticks]) => [name, pct(ticks - (a.get(name) ?? 0))] as const).filter(([, value]) => value > 0.5));
  return {
    machine: pct(after.machineBusy - before.machineBusy),
    groups: diff(before.groups, after.groups),
    threads: diff(before.threads, after.threads),
  };
}
