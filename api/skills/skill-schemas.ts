import { Type } from '@sinclair/typebox';
import { SKILL_PACKAGE_LIMITS } from '../../runtime/index.js';
import { HeadDescription, HeadName, RevisionNote } from '../agents/index.js';
import { Labels, Timestamp } from '../schemas/index.js';

export const SkillView = Type.Object(
  {
    id: Type.String({ description: 'sk_…' }),
    workspace_id: Type.String(),
    organization_id: Type.String(),
    name: Type.String(),
    description: Type.String(),
    labels: Labels,
    default_revision_id: Type.String(),
    archived_at: Type.Optional(Timestamp),
    created_at: Timestamp,
    updated_at: Timestamp,
    created_by_id: Type.String(),
    updated_by_id: Type.String(),
    version: Type.Integer(),
  },
  { $id: 'Skill' },
);

export const SkillRevisionView = Type.Object(
  {
    id: Type.String({ description: 'skr_…' }),
    skill_id: Type.String(),
    number: Type.Integer({ minimum: 1 }),
    note: Type.String(),
    digest: Type.String({ description: 'SHA-256 hex of the canonical package manifest (paths and file digests)' }),
    file_count: Type.Integer(),
    size_bytes: Type.Integer(),
    created_at: Timestamp,
    created_by_id: Type.String(),
  },
  { $id: 'SkillRevision' },
);

export const SkillFileView = Type.Object({ path: Type.String(), size: Type.Integer(), sha256: Type.String() }, { $id: 'SkillFile' });

/** `{files: {"SKILL.md": "…", "img/logo.png": {"content_base64": "…"}}}`. */
export const SkillFileMap = Type.Record(
  Type.String(),
  Type.Union([Type.String({ description: 'UTF-8 text' }), Type.Object({ content_base64: Type.String() }, { additionalProperties: false })]),
  { minProperties: 1, maxProperties: SKILL_PACKAGE_LIMITS.maxFiles, description: `path → content; SKILL.md at the root is required; at most ${SKILL_PACKAGE_LIMITS.maxFiles} files` },
);

export const CreateSkillBody = Type.Object(
  { name: HeadName, description: Type.Optional(HeadDescription), labels: Type.Optional(Labels), files: SkillFileMap, note: Type.Optional(RevisionNote) },
  { additionalProperties: false },
);

export const PublishSkillRevisionBody = Type.Object(
  { files: SkillFileMap, make_default: Type.Optional(Type.Boolean({ default: true })), note: Type.Optional(RevisionNote) },
  { additionalProperties: false },
);

export const PatchSkillBody = Type.Object(
  {
    name: Type.Optional(HeadName),
    description: Type.Optional(HeadDescription),
    labels: Type.Optional(Labels),
    default_revision_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  },
  { additionalProperties: false },
);

const Id = Type.String({ minLength: 1, maxLength: 128 });
export const SkillParams = Type.Object({ skill_id: Id });
export const SkillRevisionParams = Type.Object({ skill_id: Id, revision_id: Id });
export const SkillFileParams = Type.Object({ skill_id: Id, revision_id: Id, path: Type.String({ minLength: 1, maxLength: 1024, description: 'the file path, percent-encoded as one segment (scripts%2Frun.py)' }) });
