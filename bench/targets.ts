// The targets of issue #18, one row per figure of its table, checked on every `npm run bench`
// whichever scenarios ran: a scenario that was not selected (or does not exist in this build,
// such as `db-commits` before it lands) shows "not run" instead of a value. Scenario files keep
// only targets of their own beyond this table (checkpoint codec, ratios to ceilings).
import type { TargetSpec } from './scenario.js';

export const ISSUE_TARGETS: readonly TargetSpec[] = [
  { name: 'inbox_to_first_delta_p50', figure: 'run-latency.post_to_first_delta_p50_ms', op: '<=', target: 5, unit: 'ms' },
  { name: 'inbox_to_first_delta_p99', figure: 'run-latency.post_to_first_delta_p99_ms', op: '<=', target: 15, unit: 'ms' },
  { name: 'inbox_to_first_delta_32_clients_p50', figure: 'run-latency-32.post_to_first_delta_p50_ms', op: '<=', target: 25, unit: 'ms' },
  { name: 'cpu_ms_per_completed_run', figure: 'run-throughput.cpu_ms_per_run_service', op: '<=', target: 5, unit: 'ms' },
  { name: 'completed_runs_per_sec_64_slots', figure: 'run-throughput.runs_per_sec', op: '>=', target: 250, unit: '/s' },
  { name: 'db_commits_per_run', figure: 'db-commits.commits_per_run', op: '<=', target: 4, unit: '' },
  { name: 'post_inbox_50_connections', figure: 'api-write.requests_per_sec', op: '>=', target: 3000, unit: 'req/s' },
  { name: 'api_read_vs_uws', figure: 'ratios.api_read_vs_uws', op: '>=', target: 0.3, unit: '×' },
  { name: 'kill_to_running_elsewhere_p50', figure: 'crash-recovery.kill_to_running_elsewhere_p50_ms', op: '<=', target: 1000, unit: 'ms' },
  { name: 'fanout_1000_delta_p99', figure: 'stream-fanout.delta_p99_ms', op: '<=', target: 50, unit: 'ms' },
  { name: 'fanout_10000_ws_delta_p99', figure: 'stream-fanout-10k.delta_p99_ms', op: '<=', target: 100, unit: 'ms' },
];
