import { Type } from '@sinclair/typebox';
import { NullableTimestamp, Timestamp } from './common.js';

export const Role = Type.Union([Type.Literal('admin'), Type.Literal('member'), Type.Literal('viewer')]);

export const WorkspaceView = Type.Object(
  {
    id: Type.String(),
    organization_id: Type.String(),
    name: Type.String(),
    created_by_id: Type.Union([Type.String(), Type.Null()]),
    updated_by_id: Type.Union([Type.String(), Type.Null()]),
    created_at: Timestamp,
    updated_at: Timestamp,
    version: Type.Integer(),
    role: Type.Optional(Role),
  },
  { $id: 'Workspace' },
);

export const UserView = Type.Object(
  {
    id: Type.String(),
    organization_id: Type.String(),
    email: Type.String(),
    name: Type.String(),
    image_url: Type.String(),
    organization_role: Type.Union([Type.Literal('admin'), Type.Literal('member')]),
    disabled_at: NullableTimestamp,
    created_at: Timestamp,
    updated_at: Timestamp,
    version: Type.Integer(),
  },
  { $id: 'User' },
);

export const MembershipView = Type.Object(
  { workspace_id: Type.String(), user_id: Type.String(), role: Role, created_at: Timestamp, updated_at: Timestamp, user: Type.Optional(UserView) },
  { $id: 'Membership' },
);

export const ApiKeyView = Type.Object(
  {
    id: Type.String(),
    workspace_id: Type.String(),
    name: Type.String(),
    role: Role,
    secret_hint: Type.String({ description: 'the last characters of the secret, to tell keys apart' }),
    created_by_id: Type.String(),
    created_at: Timestamp,
    last_used_at: NullableTimestamp,
    revoked_at: NullableTimestamp,
  },
  { $id: 'ApiKey' },
);

export const AuditEventView = Type.Object(
  {
    id: Type.String(),
    workspace_id: Type.String(),
    actor_id: Type.Union([Type.String(), Type.Null()]),
    action: Type.String(),
    resource_type: Type.String(),
    resource_id: Type.String(),
    request_id: Type.Union([Type.String(), Type.Null()]),
    changes: Type.Record(Type.String(), Type.Unknown()),
    created_at: Timestamp,
  },
  { $id: 'AuditEvent' },
);
