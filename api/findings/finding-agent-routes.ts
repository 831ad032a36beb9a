import { Type } from '@sinclair/typebox';
import { prepareFindingAgent, toAgentView } from '../../runtime/index.js';
import { actorOf } from '../agents/index.js';
import { defineRoute, type ApiRouteSpec } from '../framework/index.js';
import { ErrorBody } from '../schemas/index.js';

// The agent head view, documented by the agents routes' component.
const AgentRef = Type.Unsafe<Record<string, unknown>>(Type.Ref('Agent'));

export function findingAgentRoutes(): ApiRouteSpec[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/api/v1/finding-agent',
      operationId: 'prepareFindingAgent',
      summary: "Prepare the workspace's finding agent (created once, returned afterwards)",
      description:
        "Creates an agent (preset_kind finding_agent) that reviews traces and answers {findings: [...]} on the workspace's first enabled model (in key order): 201 the first time, 200 with the same agent afterwards. A workspace without an enabled model is 400.",
      tag: 'findings',
      responses: {
        200: { description: 'the existing finding agent', schema: AgentRef },
        201: { description: 'the finding agent, just created', schema: AgentRef },
        400: { description: 'the workspace has no enabled model', schema: ErrorBody },
      },
      handler: (ctx) =>
        ctx.transaction(async (tx) => {
          const { agent, created } = await prepareFindingAgent(tx, ctx.workspaceId, actorOf(ctx));
          return { status: created ? 201 : 200, body: toAgentView(agent), etag: agent };
        }),
    }),
  ];
}
