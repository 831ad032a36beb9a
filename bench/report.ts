// Turns the figures of one bench run into the JSON document (ratios, targets) and the human
// table. Pure functions: run.ts does the I/O.
import { cpus, totalmem } from 'node:os';
import type { Figures, RatioSpec, Scenario, TargetSpec } from './scenario.js';

export interface TargetResult {
  readonly name: string;
  readonly figure: string;
  readonly op: TargetSpec['op'];
  readonly target: number;
  readonly unit: string;
  readonly value: number | null;
  readonly met: boolean;
}

export interface BenchReport {
  readonly machine: { cpus: number; cpu_model: string; memory_mb: number; node: string; platform: string; arch: string };
  readonly started_at: string;
  readonly finished_at: string;
  readonly settings: { seconds: number; pool_size: number; only: string[] | null };
  readonly ceilings: Record<string, Figures>;
  readonly scenarios: Record<string, Figures>;
  /** null when a side is missing (not selected, or its scenario failed) or the denominator is 0. */
  readonly ratios: Record<string, number | null>;
  readonly targets: TargetResult[];
}

export function describeMachine(): BenchReport['machine'] {
  const list = cpus();
  return {
    cpus: list.length,
    cpu_model: list[0]?.model ?? 'unknown',
    memory_mb: Math.round(totalmem() / 2 ** 20),
    node: process.version,
    platform: process.platform,
    arch: process.arch,
  };
}

/** Looks up `<scenario name>.<figure key>` across ceilings and scenarios; numbers only. */
function figureAt(results: ReadonlyMap<string, Figures>, path: string): number | null {
  const dot = path.indexOf('.');
  const value = results.get(path.slice(0, dot))?.[path.slice(dot + 1)];
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

const RATIO_PREFIX = 'ratios.';

export function computeRatios(ran: readonly Scenario[], results: ReadonlyMap<string, Figures>): Record<string, number | null> {
  const out: Record<string, number | null> = {};
  const specs: RatioSpec[] = ran.flatMap((s) => s.ratios ?? []);
  for (const spec of specs) {
    const a = figureAt(results, spec.numerator);
    const b = figureAt(results, spec.denominator);
    out[spec.name] = a === null || b === null || b === 0 ? null : Math.round((a / b) * 1000) / 1000;
  }
  return out;
}

/** A target's figure is `<scenario>.<key>`, or `ratios.<name>` for a ratio computed above
 *  (the issue states some targets as ratios: GET ≥ 50 % of raw uWS, runs/s ≥ 30 % of commits). */
export function checkTargets(ran: readonly Scenario[], results: ReadonlyMap<string, Figures>, ratios: Readonly<Record<string, number | null>> = {}): TargetResult[] {
  return ran.flatMap((s) => s.targets ?? []).map((spec) => {
    const value = spec.figure.startsWith(RATIO_PREFIX) ? (ratios[spec.figure.slice(RATIO_PREFIX.length)] ?? null) : figureAt(results, spec.figure);
    const met = value !== null && (spec.op === '<=' ? value <= spec.target : value >= spec.target);
    return { name: spec.name, figure: spec.figure, op: spec.op, target: spec.target, unit: spec.unit, value, met };
  });
}

function rows(title: string, entries: Array<[string, string]>): string[] {
  if (entries.length === 0) return [];
  const width = Math.max(...entries.map(([k]) => k.length));
  return [title, ...entries.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`)];
}

function show(value: number | string | null): string {
  if (value === null) return '—';
  return typeof value === 'number' ? value.toLocaleString('en-US', { maximumFractionDigits: 3 }) : value;
}

/** The human table: one block per ceiling/scenario, then ratios and targets. */
export function renderTable(report: BenchReport): string {
  const m = report.machine;
  const lines = [`bench ${report.started_at}  ${m.cpus} × ${m.cpu_model}, node ${m.node}, ${report.settings.seconds} s per load phase`];
  for (const [section, group] of [['ceiling', report.ceilings], ['scenario', report.scenarios]] as const) {
    for (const [name, figures] of Object.entries(group)) {
      lines.push('', ...rows(`${section} ${name}`, Object.entries(figures).map(([k, v]) => [k, show(v)])));
    }
  }
  const ratios = Object.entries(report.ratios).map(([k, v]): [string, string] => [k, show(v)]);
  if (ratios.length > 0) lines.push('', ...rows('ratios', ratios));
  const targets = report.targets.map((t): [string, string] => [
    t.name,
    `${show(t.value)} ${t.unit} ${t.op} ${t.target} ${t.unit}  ${t.met ? 'MET' : 'NOT MET'}`,
  ]);
  if (targets.length > 0) lines.push('', ...rows('targets', targets));
  return `${lines.join('\n')}\n`;
}
