import type { Queryable } from '../db/index.js';
import { AppError } from '../errors/index.js';
import { createAgent, validateAgentConfig, type HeadActor } from '../agents/index.js';
import { getAgent, getFindingAgentId, insertFindingAgent, listModels, lockFindingAgentSlot, type AgentRow, type Model } from '../stores/index.js';
import { findingAgentConfig } from './finding-agent-config.js';
import { FINDING_AGENT_PRESET } from './finding-values.js';

/** The workspace's first enabled model in key order, or null. */
async function firstEnabledModel(db: Queryable, workspaceId: string): Promise<Model | null> {
  for (let after: string | undefined; ; ) {
    const rows = await listModels(db, workspaceId, { limit: 100, ...(after !== undefined ? { after } : {}) });
    const enabled = rows.find((m) => m.enabled);
    if (enabled) return enabled;
    if (rows.length < 100) return null;
    after = rows[rows.length - 1]!.key;
  }
}

/**
 * Returns the workspace's finding agent, creating it on the first call (in the caller's
 * transaction). Once per workspace: the advisory lock serializes concurrent first calls and
 * finding_agents' primary key is the backstop. Later calls return the recorded agent as it is
 * now (renamed, re-configured or archived by its users), never a second one.
 */
export async function prepareFindingAgent(tx: Queryable, workspaceId: string, actor: HeadActor): Promise<{ agent: AgentRow; created: boolean }> {
  await lockFindingAgentSlot(tx, workspaceId);
  const existingId = await getFindingAgentId(tx, workspaceId);
  if (existingId !== null) {
    const agent = await getAgent(tx, workspaceId, existingId);
    if (agent) return { agent, created: false };
  }
  const model = await firstEnabledModel(tx, workspaceId);
  if (!model) throw new AppError('invalid_argument', 'the workspace has no enabled model: create or enable a model (POST /api/v1/models) before preparing the finding agent');
  const config = await validateAgentConfig(tx, workspaceId, findingAgentConfig(model.key), 'config');
  const { agent } = await createAgent(
    tx,
    { workspaceId, name: 'Finding agent', description: 'Reviews traces of other agents and reports findings (prepared by POST /api/v1/finding-agent).', config, presetKind: FINDING_AGENT_PRESET },
    actor,
  );
  await insertFindingAgent(tx, workspaceId, agent.id);
  return { agent, created: true };
}
