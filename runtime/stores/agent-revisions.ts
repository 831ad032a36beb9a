import { toIso, type Queryable } from '../db/index.js';

/**
 * An immutable agent revision (spec 2.4). `config` is the validated configuration as stored;
 * runtime/agents gives it its static type (AgentConfig), which this store does not import so
 * that stores stay below the agent domain.
 */
export interface AgentRevisionRow {
  id: string;
  workspace_id: string;
  agent_id: string;
  number: number;
  note: string;
  digest: string;
  config: Record<string, unknown>;
  created_by_id: string | null;
  created_at: string;
}

const mapAgentRevision = (row: Record<string, unknown>): AgentRevisionRow => ({
  id: row.id as string,
  workspace_id: row.workspace_id as string,
  agent_id: row.agent_id as string,
  number: row.number as number,
  note: row.note as string,
  digest: row.digest as string,
  config: row.config as Record<string, unknown>,
  created_by_id: (row.created_by_id as string | null) ?? null,
  created_at: toIso(row.created_at)!,
});

export async function insertAgentRevision(
  db: Queryable,
  row: { id: string; workspace_id: string; agent_id: string; number: number; note: string; digest: string; config: unknown; created_by_id: string | null },
): Promise<AgentRevisionRow> {
  const result = await db.query(
    `insert into agent_revisions (id, workspace_id, agent_id, number, note, digest, config, created_by_id)
     values ($1, $2, $3, $4, $5, $6, $7, $8) returning *`,
    [row.id, row.workspace_id, row.agent_id, row.number, row.note, row.digest, JSON.stringify(row.config), row.created_by_id],
  );
  return mapAgentRevision(result.rows[0]);
}

/** A revision of the given agent in the workspace (null when absent or another agent's). */
export async function getAgentRevision(db: Queryable, workspaceId: string, agentId: string, id: string): Promise<AgentRevisionRow | null> {
  const result = await db.query(`select * from agent_revisions where workspace_id = $1 and agent_id = $2 and id = $3`, [workspaceId, agentId, id]);
  return result.rows[0] ? mapAgentRevision(result.rows[0]) : null;
}

/** Newest first; `before` is the cursor position (an exclusive upper bound on number). */
export async function listAgentRevisions(db: Queryable, workspaceId: string, agentId: string, page: { limit: number; before?: number }): Promise<AgentRevisionRow[]> {
  const result = await db.query(
    `select * from agent_revisions where workspace_id = $1 and agent_id = $2 and ($3::int is null or number < $3) order by number desc limit $4`,
    [workspaceId, agentId, page.before ?? null, page.limit],
  );
  return result.rows.map(mapAgentRevision);
}
