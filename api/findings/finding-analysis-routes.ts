import { Type } from '@sinclair/typebox';
import { AppError, findingAnalysisView, getFindingAnalysisWithRunStatus } from '../../runtime/index.js';
import { engineFor, startFindingAnalysis } from '../../actors/index.js';
import { defineRoute, type ApiResult, type ApiRouteSpec } from '../framework/index.js';
import { ErrorBody } from '../schemas/index.js';
import { CreateAnalysisBody, FindingAnalysisView } from './finding-schemas.js';

/** A timestamp the database can compare: ISO 8601 with a date and a time (400 otherwise). */
function timestampOf(value: string | undefined, field: string): string | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(Date.parse(value))) throw new AppError('invalid_argument', `${field}: not an ISO 8601 date-time`, { details: { field } });
  return new Date(value).toISOString();
}

export function findingAnalysisRoutes(): ApiRouteSpec[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/api/v1/finding-analyses',
      operationId: 'createFindingAnalysis',
      summary: "Analyse an agent's traces with the finding agent",
      description:
        "Selects the agent's sealed runs (newest first, created within started_after..started_before, or the one trace_id; up to max_traces, default 10) and queues them as one input to the finding agent (prepared on first use) on a new session and thread. When the analysis run completes, its findings are recorded with evidence restricted to the selected traces.",
      tag: 'findings',
      permission: 'run',
      idempotency: 'required',
      body: CreateAnalysisBody,
      responses: {
        201: { description: 'the analysis', schema: FindingAnalysisView },
        400: { description: 'invalid body, no matching trace, or no enabled model for the finding agent', schema: ErrorBody },
        404: { description: 'agent or trace not found', schema: ErrorBody },
      },
      handler: async (ctx) => {
        const startedAfter = timestampOf(ctx.body.started_after, 'body.started_after');
        const startedBefore = timestampOf(ctx.body.started_before, 'body.started_before');
        let response: ApiResult | undefined;
        await startFindingAnalysis(
          engineFor(ctx.services),
          { workspaceId: ctx.workspaceId, principal: ctx.principal, requestId: ctx.requestId, requestKey: ctx.request.headers['idempotency-key'] ?? null },
          { ...ctx.body, started_after: startedAfter, started_before: startedBefore },
          async (tx, view) => {
            response = { status: 201, body: view };
            // the Idempotency-Key record commits with the analysis and its run
            await ctx.completeIdempotency(tx, response);
          },
        );
        return response!;
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/finding-analyses/{analysis_id}',
      operationId: 'getFindingAnalysis',
      summary: 'One finding analysis, with the current status of its run',
      tag: 'findings',
      params: Type.Object({ analysis_id: Type.String({ minLength: 1, maxLength: 128 }) }),
      responses: { 200: { description: 'the analysis', schema: FindingAnalysisView }, 404: { description: 'not found', schema: ErrorBody } },
      handler: async ({ services, workspaceId, params }) => {
        // One statement: the run's status and the counts its seal writes, from one snapshot.
        const found = await getFindingAnalysisWithRunStatus(services.pool, workspaceId, params.analysis_id);
        if (!found) throw new AppError('not_found', 'finding analysis not found');
        return { status: 200, body: findingAnalysisView(found.analysis, found.runStatus ?? 'unknown'), etag: found.analysis };
      },
    }),
  ];
}
