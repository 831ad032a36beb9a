import type { AgentRevisionRow, AgentRow, SkillRevisionRow, SkillRow } from '../stores/index.js';

// API views of heads and revisions (spec 2.3, 2.4). archived_at and preset_kind are absent
// rather than null when unset, as the spec's field table says ("timestamp or absent").

/** The avatar URL the API serves; the digest makes a changed image a new URL for caches. */
export const avatarUrl = (agent: AgentRow): string => (agent.avatar_sha256 ? `/api/v1/agents/${agent.id}/avatar?v=${agent.avatar_sha256.slice(0, 16)}` : '');

export function toAgentView(agent: AgentRow): Record<string, unknown> {
  return {
    id: agent.id,
    workspace_id: agent.workspace_id,
    organization_id: agent.organization_id,
    name: agent.name,
    description: agent.description,
    labels: agent.labels,
    image_url: avatarUrl(agent),
    default_revision_id: agent.default_revision_id,
    ...(agent.archived_at !== null ? { archived_at: agent.archived_at } : {}),
    ...(agent.preset_kind !== null ? { preset_kind: agent.preset_kind } : {}),
    source: agent.source,
    created_at: agent.created_at,
    updated_at: agent.updated_at,
    created_by_id: agent.created_by_id ?? '',
    updated_by_id: agent.updated_by_id ?? '',
    version: agent.version,
  };
}

export function toAgentRevisionView(revision: Pick<AgentRevisionRow, 'id' | 'agent_id' | 'number' | 'note' | 'digest' | 'created_at' | 'created_by_id' | 'config'>): Record<string, unknown> {
  return {
    id: revision.id,
    agent_id: revision.agent_id,
    number: revision.number,
    note: revision.note,
    digest: revision.digest,
    created_at: revision.created_at,
    created_by_id: revision.created_by_id ?? '',
    config: revision.config,
  };
}

export function toSkillView(skill: SkillRow): Record<string, unknown> {
  return {
    id: skill.id,
    workspace_id: skill.workspace_id,
    organization_id: skill.organization_id,
    name: skill.name,
    description: skill.description,
    labels: skill.labels,
    default_revision_id: skill.default_revision_id,
    ...(skill.archived_at !== null ? { archived_at: skill.archived_at } : {}),
    created_at: skill.created_at,
    updated_at: skill.updated_at,
    created_by_id: skill.created_by_id ?? '',
    updated_by_id: skill.updated_by_id ?? '',
    version: skill.version,
  };
}

export function toSkillRevisionView(revision: SkillRevisionRow): Record<string, unknown> {
  return {
    id: revision.id,
    skill_id: revision.skill_id,
    number: revision.number,
    note: revision.note,
    digest: revision.digest,
    file_count: revision.file_count,
    size_bytes: revision.size_bytes,
    created_at: revision.created_at,
    created_by_id: revision.created_by_id ?? '',
  };
}
