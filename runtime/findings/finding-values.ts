// The enumerations of findings and analyses. The spec shows one 'seen' value of each
// (unclear_request, critical, unreviewed, execution); these closed sets are this service's
// decision (README, "Findings"), mirrored by the check constraints of migration 0006.

export const FINDING_CATEGORIES = ['unclear_request', 'tool_misuse', 'hallucination', 'instruction_violation', 'inefficiency', 'error_handling', 'other'] as const;
export type FindingCategory = (typeof FINDING_CATEGORIES)[number];

export const FINDING_SEVERITIES = ['none', 'low', 'medium', 'high', 'critical'] as const;
export type FindingSeverity = (typeof FINDING_SEVERITIES)[number];
export const DEFAULT_FINDING_SEVERITY: FindingSeverity = 'medium';

export const FINDING_ASSESSMENTS = ['unreviewed', 'confirmed', 'dismissed'] as const;
export type FindingAssessment = (typeof FINDING_ASSESSMENTS)[number];

/** What each selected trace shows the finding agent: 'execution' adds the run's items. */
export const ANALYSIS_PRESETS = ['execution'] as const;
export type AnalysisPreset = (typeof ANALYSIS_PRESETS)[number];

/** The agent head's preset_kind of a workspace's finding agent. */
export const FINDING_AGENT_PRESET = 'finding_agent';
