import type pg from 'pg';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import {
  FINDING_CATEGORIES,
  FINDING_SEVERITIES,
  ID_PREFIX,
  getRun,
  insertAnalysisFinding,
  insertAuditEvent,
  lockFindingAnalysisOfRun,
  newId,
  setFindingAnalysisCounts,
  type FindingAnalysis,
  type FindingEvidence,
  type RunRow,
  type Services,
  type ThreadState,
} from '../../../runtime/index.js';

// One finding of the finding agent's output. The attempt already validated the output against
// the agent's output_spec, but the finding agent's configuration can be changed by its users,
// so each finding is checked again here and a malformed one is skipped, never the whole seal.
const OutputFinding = Type.Object({
  category: Type.Union(FINDING_CATEGORIES.map((c) => Type.Literal(c))),
  severity: Type.Union(FINDING_SEVERITIES.map((s) => Type.Literal(s))),
  title: Type.String({ minLength: 1, maxLength: 1000 }),
  explanation: Type.String({ maxLength: 65536 }),
  suggestion: Type.String({ maxLength: 65536 }),
  evidence: Type.Array(Type.Object({ run_id: Type.String(), trace_id: Type.Optional(Type.String()) }), { maxItems: 100 }),
  source_key: Type.String({ minLength: 1, maxLength: 256 }),
});
type OutputFinding = Static<typeof OutputFinding>;

function outputFindings(output: unknown): OutputFinding[] {
  const list = (output as { findings?: unknown } | null)?.findings;
  return Array.isArray(list) ? list.filter((f): f is OutputFinding => Value.Check(OutputFinding, f)) : [];
}

/**
 * Evidence restricted to the analysis's selected traces: a citation of a trace that was not
 * selected (an id the model invented or copied from elsewhere) is dropped, so a finding only
 * ever points at runs of the analysed agent that the analysis was given. One entry per trace.
 */
function selectedEvidence(finding: OutputFinding, selected: Map<string, string>): { evidence: FindingEvidence[]; dropped: number } {
  const evidence: FindingEvidence[] = [];
  let dropped = 0;
  for (const cited of finding.evidence) {
    const traceId = selected.get(cited.run_id);
    if (traceId === undefined) dropped++;
    else if (!evidence.some((e) => e.run_id === cited.run_id)) evidence.push({ run_id: cited.run_id, trace_id: traceId, span_ids: [] });
  }
  return { evidence, dropped };
}

async function recordFindings(tx: pg.PoolClient, analysis: FindingAnalysis, sealed: RunRow): Promise<void> {
  const selected = new Map(analysis.selected_traces.map((t) => [t.run_id, t.trace_id]));
  const revisionOf = new Map<string, string>();
  const cited = new Set<string>();
  let count = 0;
  for (const finding of outputFindings(sealed.output)) {
    const { evidence, dropped } = selectedEvidence(finding, selected);
    // a finding left without evidence is not grounded in the analysed traces: not recorded
    const first = evidence[0];
    if (!first) continue;
    if (!revisionOf.has(first.run_id)) revisionOf.set(first.run_id, (await getRun(tx, analysis.workspace_id, first.run_id))!.agent_revision_id);
    const row = await insertAnalysisFinding(tx, {
      id: newId(ID_PREFIX.finding),
      workspace_id: analysis.workspace_id,
      agent_id: analysis.agent_id,
      // the revision the first cited trace executed
      agent_revision_id: revisionOf.get(first.run_id)!,
      analysis_id: analysis.id,
      source_run_id: sealed.id,
      source_key: finding.source_key,
      title: finding.title,
      explanation: finding.explanation,
      suggestion: finding.suggestion,
      limitations: dropped > 0 ? `${dropped} citation(s) of traces outside the analysis selection were dropped.` : '',
      category: finding.category,
      severity: finding.severity,
      evidence,
      created_by_id: analysis.created_by_id,
    });
    // null: the analysis already has a finding with this source_key (repeated in the output)
    if (!row) continue;
    count++;
    evidence.forEach((e) => cited.add(e.run_id));
    await insertAuditEvent(tx, { workspace_id: row.workspace_id, actor_id: null, action: 'finding.created', resource_type: 'finding', resource_id: row.id, changes: { analysis_id: analysis.id, source_key: row.source_key } });
  }
  await setFindingAnalysisCounts(tx, analysis.id, { finding_count: count, cited_trace_count: cited.size });
}

/**
 * Seal hook: when a finding analysis's run completes, its output's findings become rows, in the
 * seal's transaction (so the findings appear exactly when the run shows completed). The run
 * seals once, and (analysis_id, source_key) is unique, so findings are never duplicated. Work
 * runs under a savepoint: a failure here is logged and leaves the analysis without findings
 * rather than undoing the seal of its run.
 */
export const recordAnalysisFindings = Object.assign(
  async (tx: pg.PoolClient, sealed: RunRow, services: Services, thread: ThreadState): Promise<void> => {
    if (!concernsAnalysis(thread, sealed.status)) return;
    await recordCompletedAnalysis(tx, sealed, services);
  },
  { concerns: concernsAnalysis, concernedSql: (status: string) => (status === 'completed' ? `jsonb_typeof(t.labels -> 'finding_analysis_id') = 'string'` : null) },
);

/**
 * An analysis's run is on the thread start-analysis made for it, labelled with the analysis id:
 * any other thread's run needs no lookup (a statement saved on every seal), and only a
 * completed one has findings.
 */
function concernsAnalysis(thread: ThreadState, status: string): boolean {
  return status === 'completed' && typeof thread.labels?.finding_analysis_id === 'string';
}

async function recordCompletedAnalysis(tx: pg.PoolClient, sealed: RunRow, services: Services): Promise<void> {
  const analysis = await lockFindingAnalysisOfRun(tx, sealed.id);
  if (!analysis) return;
  await tx.query('savepoint record_findings');
  try {
    await recordFindings(tx, analysis, sealed);
    await tx.query('release savepoint record_findings');
  } catch (error) {
    await tx.query('rollback to savepoint record_findings');
    services.logger.error({ err: error, analysis_id: analysis.id, run_id: sealed.id }, 'finding analysis: the findings of the completed run could not be recorded');
  }
}
