import { Type } from '@sinclair/typebox';
import { ANALYSIS_PRESETS, FINDING_ASSESSMENTS, FINDING_CATEGORIES, FINDING_SEVERITIES } from '../../runtime/index.js';
import { Cursor, Limit, Timestamp } from '../schemas/index.js';

// Views and bodies of the finding routes (spec 2.9, 2.10, 4 rows 7–9).

const Id = Type.String({ minLength: 1, maxLength: 128 });
const Text = Type.String({ maxLength: 65536 });
const NullableString = Type.Union([Type.String(), Type.Null()]);
const enumOf = (values: readonly string[], description: string) => Type.Union(values.map((v) => Type.Literal(v)), { description });

export const FindingCategory = enumOf(FINDING_CATEGORIES, 'what kind of problem the finding describes');
export const FindingSeverity = enumOf(FINDING_SEVERITIES, 'how much the problem matters');
export const FindingAssessment = enumOf(FINDING_ASSESSMENTS, "a person's review of the finding");
export const AnalysisPreset = enumOf(ANALYSIS_PRESETS, "what each trace shows the finding agent: 'execution' adds the run's items");

const TraceRef = Type.Object({
  run_id: Type.String({ description: 'a run of the finding\'s agent' }),
  trace_id: Type.String({ description: 'the trace of the run: a run is one trace, so this is the run id' }),
});

export const FindingView = Type.Object(
  {
    id: Type.String({ description: 'fnd_…' }),
    workspace_id: Type.String(),
    agent_id: Type.String(),
    agent_revision_id: Type.String(),
    analysis_id: NullableString,
    source_run_id: NullableString,
    source_key: Type.String(),
    title: Type.String(),
    explanation: Type.String(),
    suggestion: Type.String(),
    limitations: Type.String(),
    category: FindingCategory,
    severity: FindingSeverity,
    assessment: FindingAssessment,
    assessment_note: Type.String(),
    closed: Type.Boolean(),
    evidence: Type.Array(Type.Object({ run_id: Type.String(), trace_id: Type.String(), span_ids: Type.Array(Type.String()) })),
    created_by_id: NullableString,
    created_at: Timestamp,
    updated_at: Timestamp,
    version: Type.Integer(),
  },
  { $id: 'Finding' },
);

export const CreateFindingBody = Type.Object(
  {
    agent_id: Id,
    agent_revision_id: Id,
    category: FindingCategory,
    evidence: Type.Array(
      Type.Object(
        {
          run_id: Id,
          trace_id: Id,
          span_ids: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { maxItems: 100, description: 'item ids of the run (default [])' })),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 50 },
    ),
    explanation: Text,
    source_key: Type.String({ minLength: 1, maxLength: 256, description: 'unique per agent among findings created through the API' }),
    suggestion: Text,
    title: Type.String({ minLength: 1, maxLength: 1000 }),
    severity: Type.Optional(FindingSeverity),
    limitations: Type.Optional(Text),
  },
  { additionalProperties: false },
);

export const PatchFindingBody = Type.Object(
  { assessment: Type.Optional(FindingAssessment), assessment_note: Type.Optional(Text), closed: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);

export const FindingListQuery = Type.Object({
  agent_id: Type.Optional(Id),
  analysis_id: Type.Optional(Id),
  closed: Type.Optional(Type.Boolean()),
  category: Type.Optional(FindingCategory),
  severity: Type.Optional(FindingSeverity),
  limit: Limit(100, 50),
  cursor: Cursor,
});

export const CreateAnalysisBody = Type.Object(
  {
    agent_id: Type.String({ minLength: 1, maxLength: 128, description: 'the agent whose traces are analysed' }),
    max_traces: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 10 })),
    presets: Type.Optional(Type.Array(AnalysisPreset, { maxItems: 8, description: "default ['execution']" })),
    started_after: Type.Optional(Type.String({ maxLength: 64, description: 'ISO 8601 date-time: runs created after it' })),
    started_before: Type.Optional(Type.String({ maxLength: 64, description: 'ISO 8601 date-time: runs created before it' })),
    trace_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'analyse this one trace (run) only' })),
  },
  { additionalProperties: false },
);

const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);

export const FindingAnalysisView = Type.Object(
  {
    id: Type.String({ description: 'fan_…' }),
    workspace_id: Type.String(),
    agent_id: Type.String(),
    run_id: Type.String({ description: 'the analysis run (of the finding agent)' }),
    session_id: Type.String(),
    thread_id: Type.String(),
    run_status: Type.String(),
    created_at: Timestamp,
    finding_count: Type.Integer(),
    cited_trace_count: Type.Integer(),
    read_trace_ids: Type.Array(Type.String()),
    selected_traces: Type.Array(TraceRef),
    selection: Type.Object({
      agent_id: Type.String(),
      trace_id: NullableString,
      max_traces: Type.Integer(),
      presets: Type.Array(AnalysisPreset),
      started_after: NullableTimestamp,
      started_before: NullableTimestamp,
    }),
    selection_truncated: Type.Boolean(),
  },
  { $id: 'FindingAnalysis' },
);
