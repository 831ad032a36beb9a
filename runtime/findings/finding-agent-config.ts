import { FINDING_CATEGORIES, FINDING_SEVERITIES } from './finding-values.js';

// The configuration of the prepared finding agent: trace-review instructions and an output
// specification whose schema the attempt enforces (a non-matching answer is re-asked), so the
// seal hook receives `{findings: [...]}` in this shape.

const TEXT = { type: 'string', minLength: 1, maxLength: 8000 } as const;

export const FINDINGS_OUTPUT_SCHEMA: Record<string, unknown> = {
  type: 'object',
  additionalProperties: false,
  required: ['findings'],
  properties: {
    findings: {
      type: 'array',
      maxItems: 50,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['category', 'severity', 'title', 'explanation', 'suggestion', 'evidence', 'source_key'],
        properties: {
          category: { type: 'string', enum: [...FINDING_CATEGORIES] },
          severity: { type: 'string', enum: [...FINDING_SEVERITIES] },
          title: { type: 'string', minLength: 1, maxLength: 200 },
          explanation: TEXT,
          suggestion: TEXT,
          evidence: {
            type: 'array',
            minItems: 1,
            maxItems: 20,
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['run_id', 'trace_id'],
              properties: { run_id: { type: 'string', minLength: 1, maxLength: 128 }, trace_id: { type: 'string', minLength: 1, maxLength: 128 } },
            },
          },
          source_key: { type: 'string', minLength: 1, maxLength: 256 },
        },
      },
    },
  },
};

export const FINDING_AGENT_INSTRUCTIONS = [
  'You review execution traces of another AI agent and report problems worth fixing in its configuration or instructions.',
  'Each trace is one run of that agent: its input, its final output or failure, and the items it produced (messages, tool calls, tool results).',
  'Report only problems the traces show. For each finding give:',
  `- category: one of ${FINDING_CATEGORIES.join(', ')};`,
  `- severity: one of ${FINDING_SEVERITIES.join(', ')};`,
  '- title: one short line; explanation: what went wrong and why it matters; suggestion: a concrete change to the agent;',
  '- evidence: the traces that show it, each as {"run_id", "trace_id"} copied exactly from the trace headers (never invent ids);',
  '- source_key: a short stable key for the finding, unique within your answer (e.g. "unclear-request-refund-policy").',
  'When the traces show no problem, answer {"findings": []}.',
].join('\n');

export function findingAgentConfig(model: string): Record<string, unknown> {
  return {
    model,
    instructions: FINDING_AGENT_INSTRUCTIONS,
    output_spec: { name: 'findings', description: 'Problems found in the reviewed traces', schema: FINDINGS_OUTPUT_SCHEMA },
  };
}
