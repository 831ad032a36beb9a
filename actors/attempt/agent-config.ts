// The attempt's typed view of the agent configuration (spec 2.4, with the run's overrides
// already applied by the host). The host hands it over as free-form JSON; only the fields the
// agent loop reads are typed here, every other field passes untouched. A configuration that
// does not fit fails the attempt with `invalid_config` instead of failing somewhere deep in
// the loop.
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { checkSchema } from '../../runtime/providers/model-adapters/index.js';

const JsonObject = Type.Record(Type.String(), Type.Unknown());

export const PERMISSIONS = ['allow', 'ask', 'deny', 'inherit'] as const;
export const Permission = Type.Union(PERMISSIONS.map((p) => Type.Literal(p)));
export type Permission = Static<typeof Permission>;

export const OutputVariant = Type.Object({
  name: Type.String({ minLength: 1 }),
  description: Type.Optional(Type.String()),
  schema: Type.Optional(JsonObject),
  resources: Type.Optional(JsonObject),
});
export type OutputVariant = Static<typeof OutputVariant>;

export const OutputSpec = Type.Object({
  name: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  schema: Type.Optional(JsonObject),
  resources: Type.Optional(JsonObject),
  variants: Type.Optional(Type.Array(OutputVariant)),
});
export type OutputSpec = Static<typeof OutputSpec>;

/** Per-tool settings inside a toolset (`toolsets.<name>.tools.<tool>`). */
export const ToolSettings = Type.Object({
  enabled: Type.Optional(Type.Boolean()),
  permission: Type.Optional(Permission),
  /** Replaces the description the model sees. */
  description: Type.Optional(Type.String()),
});
export type ToolSettings = Static<typeof ToolSettings>;

export const ToolsetConfig = Type.Object({
  enabled: Type.Optional(Type.Boolean()),
  config: Type.Optional(JsonObject),
  tools: Type.Optional(Type.Record(Type.String(), ToolSettings)),
});
export type ToolsetConfig = Static<typeof ToolsetConfig>;

export const ClientTool = Type.Object({
  name: Type.String({ minLength: 1 }),
  description: Type.Optional(Type.String()),
  instruction: Type.Optional(Type.String()),
  metadata: Type.Optional(JsonObject),
  parameters_json_schema: Type.Optional(JsonObject),
  permission: Type.Optional(Permission),
});
export type ClientTool = Static<typeof ClientTool>;

/** Risk levels a reviewer assigns, in increasing order (reviewer-verdict.ts ranks them). */
export const RISK_LEVELS = ['none', 'low', 'medium', 'high', 'critical'] as const;
export const RiskLevel = Type.Union(RISK_LEVELS.map((r) => Type.Literal(r)));
export type RiskLevel = Static<typeof RiskLevel>;

/** What a flagged call gets: refused, or put before a person (the run's approval wait). */
export const OnFlagged = Type.Union([Type.Literal('deny'), Type.Literal('ask')]);
export type OnFlagged = Static<typeof OnFlagged>;

/** What a call gets when the reviewer fails (error, timeout, unparseable verdict, no model). */
export const OnReviewError = Type.Union([Type.Literal('deny'), Type.Literal('ask'), Type.Literal('allow')]);
export type OnReviewError = Static<typeof OnReviewError>;

export const ReviewerRule = Type.Object({
  on_flagged: Type.Optional(OnFlagged),
  risk_threshold: Type.Optional(RiskLevel),
});
export type ReviewerRule = Static<typeof ReviewerRule>;

/** `reviewer` (spec 2.4); defaults live in reviewer-verdict.ts. */
export const ReviewerConfig = Type.Object({
  instruction: Type.Optional(Type.String()),
  /** A model key of the workspace; the host resolves it (start.reviewer_model). */
  model: Type.Optional(Type.String()),
  model_settings: Type.Optional(JsonObject),
  on_error: Type.Optional(OnReviewError),
  on_flagged: Type.Optional(OnFlagged),
  risk_threshold: Type.Optional(RiskLevel),
  /** By `toolset.tool`, tool name or toolset name (in that order of precedence). */
  rules: Type.Optional(Type.Record(Type.String(), ReviewerRule)),
  shell_instruction: Type.Optional(Type.String()),
  timeout_seconds: Type.Optional(Type.Integer({ minimum: 1 })),
});
export type ReviewerConfig = Static<typeof ReviewerConfig>;

/** `subagents.<name>` (spec 2.4; checked against the workspace when the revision was published). */
export const SubagentConfig = Type.Object({
  agent_id: Type.String({ minLength: 1 }),
  agent_revision_id: Type.Optional(Type.String({ minLength: 1 })),
  description: Type.Optional(Type.String()),
});
export type SubagentConfig = Static<typeof SubagentConfig>;

/** `connection_tools` (spec 2.4): an MCP connection's tools offered to the model. */
export const ConnectionToolsEntry = Type.Object({
  connection_id: Type.String(),
  /** Only these tools (by the server's names); absent: every tool the connection allows. */
  tools: Type.Optional(Type.Array(Type.String())),
  /** Offer names only; the model loads schemas with load_connection_tools. */
  defer_loading: Type.Optional(Type.Boolean()),
  permission: Type.Optional(Permission),
  permissions: Type.Optional(Type.Record(Type.String(), Type.Union([Type.Literal('allow'), Type.Literal('ask'), Type.Literal('deny')]))),
});
export type ConnectionToolsEntry = Static<typeof ConnectionToolsEntry>;

export const AgentConfig = Type.Object({
  instructions: Type.Optional(Type.String()),
  model_settings: Type.Optional(JsonObject),
  output_spec: Type.Optional(Type.Union([OutputSpec, Type.Null()])),
  retries: Type.Optional(
    Type.Object({
      output: Type.Optional(Type.Integer({ minimum: 0 })),
      tools: Type.Optional(Type.Integer({ minimum: 0 })),
    }),
  ),
  toolsets: Type.Optional(Type.Record(Type.String(), ToolsetConfig)),
  client_tools: Type.Optional(Type.Array(ClientTool)),
  connection_tools: Type.Optional(Type.Array(ConnectionToolsEntry)),
  user_questions: Type.Optional(Type.Boolean()),
  reviewer: Type.Optional(Type.Union([ReviewerConfig, Type.Null()])),
  skills: Type.Optional(Type.Array(Type.Object({ skill_id: Type.String(), revision_id: Type.String() }))),
  subagents: Type.Optional(Type.Record(Type.String(), SubagentConfig)),
});
export type AgentConfig = Static<typeof AgentConfig>;

/** Defaults where the configuration is silent (spec 2.4 gives no values). */
export const DEFAULT_OUTPUT_RETRIES = 1;
export const DEFAULT_TOOL_RETRIES = 3;

export type ConfigResult = { ok: true; config: AgentConfig } | { ok: false; message: string };

export function readAgentConfig(raw: unknown): ConfigResult {
  if (checkSchema(AgentConfig, raw)) return { ok: true, config: raw };
  const first = Value.Errors(AgentConfig, raw).First();
  return { ok: false, message: `invalid agent configuration at ${first?.path || '/'}: ${first?.message ?? 'invalid'}` };
}

export function outputRetries(config: AgentConfig): number {
  return config.retries?.output ?? DEFAULT_OUTPUT_RETRIES;
}

export function toolRetries(config: AgentConfig): number {
  return config.retries?.tools ?? DEFAULT_TOOL_RETRIES;
}
