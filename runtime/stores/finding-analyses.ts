import { toIso, type Queryable } from '../db/index.js';

// The finding_analyses table (spec 2.10). finding_count and cited_trace_count are written once,
// by the seal hook in the transaction that seals the analysis run.

export interface TraceRef {
  run_id: string;
  trace_id: string;
}

export interface AnalysisSelection {
  agent_id: string;
  trace_id: string | null;
  max_traces: number;
  presets: string[];
  started_after: string | null;
  started_before: string | null;
}

export interface FindingAnalysis {
  id: string;
  workspace_id: string;
  agent_id: string;
  run_id: string;
  session_id: string;
  thread_id: string;
  selection: AnalysisSelection;
  selected_traces: TraceRef[];
  selection_truncated: boolean;
  read_trace_ids: string[];
  finding_count: number;
  cited_trace_count: number;
  created_by_id: string | null;
  created_at: string;
  updated_at: string;
  version: number;
}

const mapAnalysis = (row: Record<string, unknown>): FindingAnalysis => ({
  id: row.id as string,
  workspace_id: row.workspace_id as string,
  agent_id: row.agent_id as string,
  run_id: row.run_id as string,
  session_id: row.session_id as string,
  thread_id: row.thread_id as string,
  selection: row.selection as AnalysisSelection,
  selected_traces: row.selected_traces as TraceRef[],
  selection_truncated: row.selection_truncated as boolean,
  read_trace_ids: row.read_trace_ids as string[],
  finding_count: row.finding_count as number,
  cited_trace_count: row.cited_trace_count as number,
  created_by_id: (row.created_by_id as string | null) ?? null,
  created_at: toIso(row.created_at)!,
  updated_at: toIso(row.updated_at)!,
  version: row.version as number,
});

/** The API view (spec 2.10): the row plus the analysis run's current status. */
export function findingAnalysisView(analysis: FindingAnalysis, runStatus: string): Record<string, unknown> {
  return {
    id: analysis.id,
    workspace_id: analysis.workspace_id,
    agent_id: analysis.agent_id,
    run_id: analysis.run_id,
    session_id: analysis.session_id,
    thread_id: analysis.thread_id,
    run_status: runStatus,
    created_at: analysis.created_at,
    finding_count: analysis.finding_count,
    cited_trace_count: analysis.cited_trace_count,
    read_trace_ids: analysis.read_trace_ids,
    selected_traces: analysis.selected_traces,
    selection: analysis.selection,
    selection_truncated: analysis.selection_truncated,
  };
}

export async function insertFindingAnalysis(
  db: Queryable,
  row: Pick<FindingAnalysis, 'id' | 'workspace_id' | 'agent_id' | 'run_id' | 'session_id' | 'thread_id' | 'selection' | 'selected_traces' | 'selection_truncated' | 'read_trace_ids' | 'created_by_id'>,
): Promise<FindingAnalysis> {
  const result = await db.query(
    `insert into finding_analyses (id, workspace_id, agent_id, run_id, session_id, thread_id, selection, selected_traces, selection_truncated, read_trace_ids, created_by_id)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) returning *`,
    [
      row.id, row.workspace_id, row.agent_id, row.run_id, row.session_id, row.thread_id, JSON.stringify(row.selection), JSON.stringify(row.selected_traces),
      row.selection_truncated, JSON.stringify(row.read_trace_ids), row.created_by_id,
    ],
  );
  return mapAnalysis(result.rows[0]);
}

/**
 * An analysis with its run's status, read in one statement (one snapshot): the seal that shows
 * the run completed also writes the counts, so a reader never sees "completed" with the counts
 * as they were before it. (Two reads let a seal land between them: a client polling for
 * completion then saw finding_count 0.)
 */
export async function getFindingAnalysisWithRunStatus(db: Queryable, workspaceId: string, id: string): Promise<{ analysis: FindingAnalysis; runStatus: string | null } | null> {
  const result = await db.query(
    `select a.*, r.status as run_status from finding_analyses a left join runs r on r.id = a.run_id where a.workspace_id = $1 and a.id = $2`,
    [workspaceId, id],
  );
  const row = result.rows[0];
  return row ? { analysis: mapAnalysis(row), runStatus: (row.run_status as string | null) ?? null } : null;
}

/** The analysis a run executes, locked for the seal hook (null for every other run). */
export async function lockFindingAnalysisOfRun(db: Queryable, runId: string): Promise<FindingAnalysis | null> {
  const result = await db.query(`select * from finding_analyses where run_id = $1 for update`, [runId]);
  return result.rows[0] ? mapAnalysis(result.rows[0]) : null;
}

export async function setFindingAnalysisCounts(db: Queryable, id: string, counts: { finding_count: number; cited_trace_count: number }): Promise<void> {
  await db.query(`update finding_analyses set finding_count = $2, cited_trace_count = $3, version = version + 1, updated_at = now() where id = $1`, [
    id,
    counts.finding_count,
    counts.cited_trace_count,
  ]);
}


