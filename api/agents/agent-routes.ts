import {
  AppError,
  agentTable,
  changeHead,
  createAgent,
  listAgents,
  readAgent,
  toAgentView,
  validateAgentConfig,
  type HeadActor,
  type AgentRow,
} from '../../runtime/index.js';
import { defineRoute, type ApiContext, type ApiResult, type ApiRouteSpec } from '../framework/index.js';
import { ErrorBody, ListOf } from '../schemas/index.js';
import { AgentParams, AgentView, CreateAgentBody, PatchAgentBody } from './agent-schemas.js';
import { headListFilter, HeadListQuery } from './head-list-query.js';

export const actorOf = (ctx: ApiContext<unknown, unknown, unknown>): HeadActor => ({ id: ctx.principal.id, requestId: ctx.requestId });

/** A head view with its ETag. */
export const agentResult = (agent: AgentRow, status = 200): ApiResult => ({ status, body: toAgentView(agent), etag: { id: agent.id, version: agent.version } });

/**
 * Loads an agent of the request's workspace: another workspace's is 404 like a missing one.
 * Read through the process's cache (a head change drops it: see ReadCaches); an If-Match check
 * against a cached head that is stale by the pub/sub delay fails at the update, whose
 * `where version = $n` is the authority.
 */
export async function loadAgent(ctx: ApiContext<unknown, unknown, unknown>, agentId: string): Promise<AgentRow> {
  const agent = await readAgent(ctx.services.caches, ctx.services.pool, ctx.workspaceId, agentId);
  if (!agent) throw new AppError('not_found', 'agent not found');
  return agent;
}

export function agentHeadRoutes(): ApiRouteSpec[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/api/v1/agents',
      operationId: 'createAgent',
      summary: 'Create an agent: its head and revision 1',
      description: 'The configuration is validated whole (spec 2.4): JSON Schemas must be well-formed (400); model, reviewer.model, skills and their revisions must be resources of this workspace (404, spec 2.1). Errors name the field.',
      tag: 'agents',
      idempotency: 'optional',
      body: CreateAgentBody,
      responses: { 201: { description: 'the new agent head', schema: AgentView }, 400: { description: 'invalid configuration (details name the field)', schema: ErrorBody }, 404: { description: 'a referenced model, skill or skill revision is not in this workspace (details.field names it)', schema: ErrorBody } },
      handler: async (ctx) => {
        const config = await validateAgentConfig(ctx.services.pool, ctx.workspaceId, ctx.body.config, 'body.config');
        const { body } = ctx;
        return ctx.transaction(async (tx) => {
          const input = { workspaceId: ctx.workspaceId, name: body.name, config, ...(body.description !== undefined ? { description: body.description } : {}), ...(body.labels ? { labels: body.labels } : {}), ...(body.note !== undefined ? { note: body.note } : {}) };
          const { agent } = await createAgent(tx, input, actorOf(ctx));
          return agentResult(agent, 201);
        });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/agents',
      operationId: 'listAgents',
      summary: 'Agents of the workspace, oldest first, with label, q and archived filters',
      tag: 'agents',
      query: HeadListQuery,
      responses: { 200: { description: 'a page of agent heads', schema: ListOf(AgentView) } },
      handler: async (ctx) => {
        const filter = headListFilter(ctx.query, ctx.cursors);
        const rows = await listAgents(ctx.services.pool, ctx.workspaceId, filter);
        const result = ctx.cursors.page(rows, filter.limit - 1, (a) => ({ id: a.id }));
        return { status: 200, body: { items: result.items.map(toAgentView), next_cursor: result.next_cursor } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/agents/{agent_id}',
      operationId: 'getAgent',
      summary: 'An agent head (ETag: "<id>:<version>")',
      tag: 'agents',
      params: AgentParams,
      responses: { 200: { description: 'the agent head', schema: AgentView } },
      handler: async (ctx) => agentResult(await loadAgent(ctx, ctx.params.agent_id)),
    }),
    defineRoute({
      method: 'PATCH',
      path: '/api/v1/agents/{agent_id}',
      operationId: 'updateAgent',
      summary: 'Change head fields: name, description, labels (replaced whole), default_revision_id',
      description: 'Changes only the head; the configuration changes by publishing a revision. A change that changes nothing keeps the version.',
      tag: 'agents',
      params: AgentParams,
      ifMatch: true,
      body: PatchAgentBody,
      responses: { 200: { description: 'the agent head', schema: AgentView }, 404: { description: 'agent not found, or default_revision_id is not a revision of this agent', schema: ErrorBody } },
      handler: async (ctx) => {
        ctx.precondition(await loadAgent(ctx, ctx.params.agent_id));
        return ctx.transaction(async (tx) => {
          const agent = await changeHead(tx, agentTable, { workspaceId: ctx.workspaceId, id: ctx.params.agent_id, precondition: ctx.precondition }, ctx.body, actorOf(ctx));
          return agentResult(agent);
        });
      },
    }),
  ];
}
