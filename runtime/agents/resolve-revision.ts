import { readAgent, readAgentRevision, type ReadCaches } from '../cache/index.js';
import type { Queryable } from '../db/index.js';
import { AppError, referenceNotFound } from '../errors/index.js';
import type { AgentRow } from '../stores/index.js';
import { typedAgentRevision, type AgentRevision } from './agent-operations.js';

/**
 * The revision a new run of an agent executes: the pinned one when given, else the head's
 * default revision at this moment (the run then pins it). An archived head starts no new run
 * (409 conflict "agent is archived"); a missing agent or revision, or one of another
 * workspace, is 404 exactly like an absent one. Pass the run engine's transaction as `db` to
 * read the head and revision in the snapshot that records the run. `fields` names the request
 * body fields the ids came from, so a 404 says which reference named nothing (spec 2.1).
 * With `caches`, head and revision may come from the process's read cache instead (revisions
 * are immutable; a head change reaches the cache within the pub/sub delay, see ReadCaches).
 */
export async function resolveAgentRevision(
  db: Queryable,
  workspaceId: string,
  agentId: string,
  revisionId?: string | null,
  fields: { agent: string; revision: string } = { agent: 'agent_id', revision: 'agent_revision_id' },
  caches?: ReadCaches,
): Promise<{ agent: AgentRow; revision: AgentRevision }> {
  const agent = await readAgent(caches, db, workspaceId, agentId);
  if (!agent) throw referenceNotFound(fields.agent, 'agent');
  if (agent.archived_at !== null) throw new AppError('conflict', 'agent is archived', { details: { agent_id: agent.id, archived_at: agent.archived_at } });
  const revision = await readAgentRevision(caches, db, workspaceId, agent.id, revisionId ?? agent.default_revision_id);
  if (!revision) throw referenceNotFound(revisionId ? fields.revision : fields.agent, 'agent revision');
  return { agent, revision: typedAgentRevision(revision) };
}
