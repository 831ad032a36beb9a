import { toIso, type Queryable } from '../db/index.js';

// The findings table (spec 2.9). Evidence is stored as given after validation: every run_id is
// a run of the finding's agent in its workspace (checked by the caller before insert).

export interface FindingEvidence {
  run_id: string;
  trace_id: string;
  span_ids: string[];
}

export interface Finding {
  id: string;
  workspace_id: string;
  agent_id: string;
  agent_revision_id: string;
  analysis_id: string | null;
  source_run_id: string | null;
  source_key: string;
  title: string;
  explanation: string;
  suggestion: string;
  limitations: string;
  category: string;
  severity: string;
  assessment: string;
  assessment_note: string;
  closed: boolean;
  evidence: FindingEvidence[];
  created_by_id: string | null;
  created_at: string;
  updated_at: string;
  version: number;
}

export type NewFinding = Omit<Finding, 'assessment' | 'assessment_note' | 'closed' | 'created_at' | 'updated_at' | 'version'>;

export interface FindingChanges {
  assessment?: string | undefined;
  assessment_note?: string | undefined;
  closed?: boolean | undefined;
}

export interface FindingFilter {
  agent_id?: string | undefined;
  analysis_id?: string | undefined;
  closed?: boolean | undefined;
  category?: string | undefined;
  severity?: string | undefined;
  after?: string | undefined;
  limit: number;
}

const mapFinding = (row: Record<string, unknown>): Finding => ({
  id: row.id as string,
  workspace_id: row.workspace_id as string,
  agent_id: row.agent_id as string,
  agent_revision_id: row.agent_revision_id as string,
  analysis_id: (row.analysis_id as string | null) ?? null,
  source_run_id: (row.source_run_id as string | null) ?? null,
  source_key: row.source_key as string,
  title: row.title as string,
  explanation: row.explanation as string,
  suggestion: row.suggestion as string,
  limitations: row.limitations as string,
  category: row.category as string,
  severity: row.severity as string,
  assessment: row.assessment as string,
  assessment_note: row.assessment_note as string,
  closed: row.closed as boolean,
  evidence: row.evidence as FindingEvidence[],
  created_by_id: (row.created_by_id as string | null) ?? null,
  created_at: toIso(row.created_at)!,
  updated_at: toIso(row.updated_at)!,
  version: row.version as number,
});

const INSERT_COLUMNS = `id, workspace_id, agent_id, agent_revision_id, analysis_id, source_run_id, source_key, title, explanation, suggestion,
  limitations, category, severity, evidence, created_by_id`;
const insertValues = (row: NewFinding): unknown[] => [
  row.id, row.workspace_id, row.agent_id, row.agent_revision_id, row.analysis_id, row.source_run_id, row.source_key, row.title, row.explanation,
  row.suggestion, row.limitations, row.category, row.severity, JSON.stringify(row.evidence), row.created_by_id,
];

/** Inserts a finding; a repeated (agent, source_key) of an API finding raises 23505. */
export async function insertFinding(db: Queryable, row: NewFinding): Promise<Finding> {
  const result = await db.query(
    `insert into findings (${INSERT_COLUMNS}) values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) returning *`,
    insertValues(row),
  );
  return mapFinding(result.rows[0]);
}

/**
 * Inserts a finding of an analysis unless the analysis already has one with this source_key
 * (the partial unique index on (analysis_id, source_key)): null when it was a duplicate.
 */
export async function insertAnalysisFinding(db: Queryable, row: NewFinding & { analysis_id: string }): Promise<Finding | null> {
  const result = await db.query(
    `insert into findings (${INSERT_COLUMNS}) values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
     on conflict (analysis_id, source_key) where analysis_id is not null do nothing returning *`,
    insertValues(row),
  );
  return result.rows[0] ? mapFinding(result.rows[0]) : null;
}

export async function getFinding(db: Queryable, workspaceId: string, id: string): Promise<Finding | null> {
  const result = await db.query(`select * from findings where workspace_id = $1 and id = $2`, [workspaceId, id]);
  return result.rows[0] ? mapFinding(result.rows[0]) : null;
}

/** The API finding of an agent with this source_key (the 409 on a repeated create names it). */
export async function getFindingBySourceKey(db: Queryable, workspaceId: string, agentId: string, sourceKey: string): Promise<Finding | null> {
  const result = await db.query(`select * from findings where workspace_id = $1 and agent_id = $2 and source_key = $3 and analysis_id is null`, [workspaceId, agentId, sourceKey]);
  return result.rows[0] ? mapFinding(result.rows[0]) : null;
}

/** Findings of the workspace in id (creation) order, after the cursor id. */
export async function listFindings(db: Queryable, workspaceId: string, filter: FindingFilter): Promise<Finding[]> {
  const result = await db.query(
    `select * from findings where workspace_id = $1
        and ($2::text is null or agent_id = $2) and ($3::text is null or analysis_id = $3) and ($4::boolean is null or closed = $4)
        and ($5::text is null or category = $5) and ($6::text is null or severity = $6) and ($7::text is null or id > $7)
      order by id limit $8`,
    [workspaceId, filter.agent_id ?? null, filter.analysis_id ?? null, filter.closed ?? null, filter.category ?? null, filter.severity ?? null, filter.after ?? null, filter.limit],
  );
  return result.rows.map(mapFinding);
}

/**
 * Optimistic update (`and version = $3`): null when the finding moved on meanwhile. Callers
 * pass only real changes, so an update that changes nothing keeps the version.
 */
export async function updateFinding(db: Queryable, workspaceId: string, id: string, version: number, changes: FindingChanges): Promise<Finding | null> {
  const result = await db.query(
    `update findings set assessment = coalesce($4, assessment), assessment_note = coalesce($5, assessment_note), closed = coalesce($6, closed),
        version = version + 1, updated_at = now()
      where workspace_id = $1 and id = $2 and version = $3 returning *`,
    [workspaceId, id, version, changes.assessment ?? null, changes.assessment_note ?? null, changes.closed ?? null],
  );
  return result.rows[0] ? mapFinding(result.rows[0]) : null;
}
