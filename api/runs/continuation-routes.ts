import { Type } from '@sinclair/typebox';
import { runView } from '../../runtime/index.js';
import { engineFor, forkRun, resumeRun } from '../../actors/index.js';
import { defineRoute, type ApiResult, type ApiRouteSpec } from '../framework/index.js';
import { EntryRunThread, ErrorBody, InputPayload, RunView } from '../schemas/index.js';
import { toThreadBody } from './inbox-routes.js';

const RunParams = Type.Object({ run_id: Type.String({ minLength: 1, maxLength: 128 }) });
const CallId = Type.String({ minLength: 1, maxLength: 256 });

const ResumeBody = Type.Object(
  {
    approvals: Type.Optional(
      Type.Record(CallId, Type.Object({ action: Type.Union([Type.Literal('approve'), Type.Literal('deny')]), reason: Type.Optional(Type.String({ maxLength: 4000 })) }, { additionalProperties: false }), { maxProperties: 256 }),
    ),
    calls: Type.Optional(
      Type.Record(CallId, Type.Object({ status: Type.Union([Type.Literal('returned'), Type.Literal('error')]), value: Type.Optional(Type.Unknown()) }, { additionalProperties: false }), { maxProperties: 256 }),
    ),
    input: Type.Optional(InputPayload),
  },
  { additionalProperties: false },
);

export function continuationRoutes(): ApiRouteSpec[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/api/v1/runs/{run_id}/resume',
      operationId: 'resumeRun',
      summary: 'Resume the waiting run with the complete result batch; answers the successor run',
      description: 'approvals answer every pending approval (approve | deny, optional reason), calls every pending client call (returned | error, value), input answers user questions. A batch that omits or adds a tool_call_id, or a run that is not waiting or was already resumed, is 409 conflict with details. The batch is stored verbatim on the successor.',
      tag: 'runs',
      permission: 'run',
      idempotency: 'required',
      idempotencyInTransaction: true, // claimed in the thread actor's transaction
      params: RunParams,
      body: ResumeBody,
      responses: { 201: { description: 'the successor run', schema: RunView }, 409: { description: 'not waiting, already resumed, or an incomplete batch', schema: ErrorBody } },
      handler: async (ctx) => {
        let response: ApiResult | undefined;
        await resumeRun(engineFor(ctx.services), { workspaceId: ctx.workspaceId, runId: ctx.params.run_id, principalId: ctx.principal.id }, ctx.body, async (tx, successor) => {
          response = { status: 201, body: runView(successor), etag: successor };
          await ctx.completeIdempotency(tx, response);
        }, (tx) => ctx.beginIdempotency(tx));
        return response!;
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/runs/{run_id}/fork',
      operationId: 'forkRun',
      summary: "Fork a run into a new thread of its session that continues from the run's committed history",
      tag: 'runs',
      permission: 'run',
      idempotency: 'required',
      idempotencyInTransaction: true, // claimed in the fork's transaction
      params: RunParams,
      body: Type.Object({ agent_id: Type.String({ minLength: 1, maxLength: 128 }), payload: InputPayload }, { additionalProperties: false }),
      responses: { 201: { description: 'the new thread with its first entry and run', schema: EntryRunThread }, 404: { description: 'run or agent not found', schema: ErrorBody } },
      handler: async (ctx) => {
        let response: ApiResult | undefined;
        await forkRun(
          engineFor(ctx.services),
          { workspaceId: ctx.workspaceId, runId: ctx.params.run_id, principal: ctx.principal, requestKey: ctx.request.headers['idempotency-key'] ?? null },
          { agent_id: ctx.body.agent_id, payload: ctx.body.payload as Record<string, unknown> },
          async (tx, result) => {
            response = { status: 201, body: toThreadBody(result) };
            await ctx.completeIdempotency(tx, response);
          },
          (tx) => ctx.beginIdempotency(tx),
        );
        return response!;
      },
    }),
  ];
}
