import type { Queryable } from '../db/index.js';

// The finding_agents table: which agent is the workspace's prepared finding agent.

/**
 * Serializes the first preparation of a workspace's finding agent: two concurrent first calls
 * would otherwise both create an agent. The lock is transaction-scoped, so it is released with
 * the commit that records the agent (the primary key on workspace_id is the backstop).
 */
export async function lockFindingAgentSlot(db: Queryable, workspaceId: string): Promise<void> {
  await db.query(`select pg_advisory_xact_lock(hashtextextended('finding_agent:' || $1, 0))`, [workspaceId]);
}

export async function getFindingAgentId(db: Queryable, workspaceId: string): Promise<string | null> {
  const result = await db.query(`select agent_id from finding_agents where workspace_id = $1`, [workspaceId]);
  return (result.rows[0]?.agent_id as string | undefined) ?? null;
}

export async function insertFindingAgent(db: Queryable, workspaceId: string, agentId: string): Promise<void> {
  await db.query(`insert into finding_agents (workspace_id, agent_id) values ($1, $2)`, [workspaceId, agentId]);
}
