// CPU time (user + system, ms) of processes from /proc, so a scenario can say which process
// its machine-wide CPU went to over a window. Linux only; elsewhere every figure is NaN.
import { readdirSync, readFileSync } from 'node:fs';

const TICK_MS = 10; // USER_HZ is 100 on Linux x86-64

/** utime + stime of one process (all its threads), or NaN when it is gone or unreadable. */
export function processCpuMs(pid: number): number {
  return statCpuMs(`/proc/${pid}/stat`);
}

/**
 * utime + stime of one thread of a process; `threadCpuMs(pid, pid)` is its main thread, so the
 * rest of processCpuMs(pid) is its worker threads (for a worker process: the attempts) plus
 * V8's and libuv's helper threads.
 */
export function threadCpuMs(pid: number, tid: number): number {
  return statCpuMs(`/proc/${pid}/task/${tid}/stat`);
}

function statCpuMs(path: string): number {
  const fields = statFields(path);
  return fields ? (Number(fields[11]) + Number(fields[12])) * TICK_MS : NaN;
}

/** The fields of a stat file after the parenthesised command (which may hold spaces): [0] is state (field 3). */
function statFields(path: string): string[] | null {
  try {
    const stat = readFileSync(path, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** Every thread of a process: its id, when it started (ms after boot) and its CPU so far. */
export function processThreads(pid: number): Array<{ tid: number; startMs: number; cpuMs: number }> {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const out: Array<{ tid: number; startMs: number; cpuMs: number }> = [];
  for (const tid of tids) {
    const fields = statFields(`/proc/${pid}/task/${tid}/stat`);
    if (fields) out.push({ tid: Number(tid), startMs: Number(fields[19]) * TICK_MS, cpuMs: (Number(fields[11]) + Number(fields[12])) * TICK_MS });
  }
  return out;
}

/**
 * CPU of a process's threads other than the main one, split by when they started: `early` ones
 * started within `lateMs` of the main thread (V8's platform threads — GC, compilation — and
 * libuv's, all created while the process boots), `late` ones after (for a worker process: the
 * attempt pool's threads, started when the worker host is built, after the database connects).
 * All Node threads are named `node`, so start time is what tells them apart.
 */
export function threadGroupsCpuMs(pid: number, lateMs = 300): { early: number; late: number } {
  const threads = processThreads(pid);
  const main = threads.find((t) => t.tid === pid);
  if (!main) return { early: NaN, late: NaN };
  const out = { early: 0, late: 0 };
  for (const t of threads) {
    if (t.tid === pid) continue;
    if (t.startMs - main.startMs > lateMs) out.late += t.cpuMs;
    else out.early += t.cpuMs;
  }
  return out;
}
/** Summed CPU of every process whose command name is `comm` (e.g. every postgres backend). */
export function commandCpuMs(comm: string): number {
  let total = 0;
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((e) => /^\d+$/.test(e));
  } catch {
    return NaN;
  }
  for (const pid of entries) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== comm) continue;
    } catch {
      continue; // exited meanwhile
    }
    const ms = processCpuMs(Number(pid));
    if (Number.isFinite(ms)) total += ms;
  }
  return total;
}

/** Machine-wide busy CPU (ms, all cores) from /proc/stat: everything but idle and iowait. */
export function machineBusyMs(): number {
  try {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]?.split(/\s+/).slice(1).map(Number) ?? [];
    const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = cpu;
    return (user + nice + system + irq + softirq + steal) * TICK_MS;
  } catch {
    return NaN;
  }
}
