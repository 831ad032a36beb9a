import { Type } from '@sinclair/typebox';
import { AgentConfig } from '../../runtime/index.js';
import { Labels, Timestamp } from '../schemas/index.js';

// Views and bodies of the agent routes (spec 2.3, 2.4, 4 rows 10–17).

export const HeadName = Type.String({ minLength: 1, maxLength: 200 });
export const HeadDescription = Type.String({ maxLength: 4096 });
export const RevisionNote = Type.String({ maxLength: 4096 });

export const AgentView = Type.Object(
  {
    id: Type.String({ description: 'ap_…' }),
    workspace_id: Type.String(),
    organization_id: Type.String(),
    name: Type.String(),
    description: Type.String(),
    labels: Labels,
    image_url: Type.String({ description: 'the avatar URL this API serves (GET /api/v1/agents/{agent_id}/avatar), empty without an avatar' }),
    default_revision_id: Type.String({ description: 'the revision new runs without a pin execute' }),
    archived_at: Type.Optional(Timestamp),
    preset_kind: Type.Optional(Type.String()),
    source: Type.String({ description: "'custom' for agents created through this API" }),
    created_at: Timestamp,
    updated_at: Timestamp,
    created_by_id: Type.String(),
    updated_by_id: Type.String(),
    version: Type.Integer(),
  },
  { $id: 'Agent' },
);

export const AgentRevisionView = Type.Object(
  {
    id: Type.String({ description: 'apr_…' }),
    agent_id: Type.String(),
    number: Type.Integer({ minimum: 1, description: 'gap-free per agent, starting at 1' }),
    note: Type.String(),
    digest: Type.String({ description: 'SHA-256 hex of the canonical (key-sorted) configuration' }),
    created_at: Timestamp,
    created_by_id: Type.String(),
    config: AgentConfig,
  },
  { $id: 'AgentRevision' },
);

export const CreateAgentBody = Type.Object(
  { name: HeadName, description: Type.Optional(HeadDescription), labels: Type.Optional(Labels), config: AgentConfig, note: Type.Optional(RevisionNote) },
  { additionalProperties: false },
);

export const PatchAgentBody = Type.Object(
  {
    name: Type.Optional(HeadName),
    description: Type.Optional(HeadDescription),
    labels: Type.Optional(Labels),
    default_revision_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'another revision of this agent to make the default' })),
  },
  { additionalProperties: false },
);

export const PublishAgentRevisionBody = Type.Object(
  {
    config: AgentConfig,
    make_default: Type.Optional(Type.Boolean({ default: true, description: 'make the new revision the default (default true)' })),
    note: Type.Optional(RevisionNote),
  },
  { additionalProperties: false },
);

export const DuplicateAgentBody = Type.Object(
  { name: HeadName, revision_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: "defaults to the source's default revision" })) },
  { additionalProperties: false },
);

export const AgentParams = Type.Object({ agent_id: Type.String({ minLength: 1, maxLength: 128 }) });
export const AgentRevisionParams = Type.Object({ agent_id: Type.String({ minLength: 1, maxLength: 128 }), revision_id: Type.String({ minLength: 1, maxLength: 128 }) });
