import { Type } from '@sinclair/typebox';
import { AppError, AVATAR_MEDIA_TYPES, avatarKey, changeAgentAvatar, getStoredObject, MAX_AVATAR_BYTES, putStoredObject, contentSha256, sniffImageType } from '../../runtime/index.js';
import { defineRoute, type ApiRouteSpec } from '../framework/index.js';
import { ErrorBody } from '../schemas/index.js';
import { actorOf, agentResult, loadAgent } from './agent-routes.js';
import { AgentParams, AgentView } from './agent-schemas.js';

export function agentAvatarRoutes(): ApiRouteSpec[] {
  return [
    defineRoute({
      method: 'PUT',
      path: '/api/v1/agents/{agent_id}/avatar',
      operationId: 'putAgentAvatar',
      summary: 'Set the avatar: a JPEG, PNG, WebP or GIF image of at most 2 MiB',
      description:
        'The image type is read from the bytes (magic numbers), not from Content-Type; a body that is none of the four is 415, a larger one 413. image_url then points at GET /api/v1/agents/{agent_id}/avatar.',
      tag: 'agents',
      params: AgentParams,
      ifMatch: true,
      binaryBody: { mediaTypes: [...AVATAR_MEDIA_TYPES], maxBytes: MAX_AVATAR_BYTES },
      responses: { 200: { description: 'the agent head with the new image_url', schema: AgentView }, 415: { description: 'the body is not a JPEG, PNG, WebP or GIF image', schema: ErrorBody } },
      handler: async (ctx) => {
        ctx.precondition(await loadAgent(ctx, ctx.params.agent_id));
        // a binaryBody route receives the raw request bytes as its body (typed for JSON bodies)
        const bytes = ctx.body as unknown as Buffer | null;
        if (!bytes || bytes.length === 0) throw new AppError('invalid_argument', 'an image body is required');
        const mediaType = sniffImageType(bytes);
        if (!mediaType) throw new AppError('unsupported_media_type', 'the body is not a JPEG, PNG, WebP or GIF image');
        // Written before the transaction under a content-addressed key: a rollback leaves at most
        // an unreferenced copy, never a head that points at a missing object.
        const sha256 = contentSha256(bytes);
        const key = avatarKey(ctx.workspaceId, ctx.params.agent_id, sha256);
        await putStoredObject(ctx.services.objects, key, bytes, mediaType);
        return ctx.transaction(async (tx) => {
          const target = { workspaceId: ctx.workspaceId, agentId: ctx.params.agent_id, precondition: ctx.precondition };
          return agentResult(await changeAgentAvatar(tx, target, { key, media_type: mediaType, sha256, size: bytes.length }, actorOf(ctx)));
        });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/agents/{agent_id}/avatar',
      operationId: 'getAgentAvatar',
      summary: 'The avatar image, served with the type read from its bytes',
      tag: 'agents',
      params: AgentParams,
      query: Type.Object({ v: Type.Optional(Type.String({ maxLength: 64, description: 'cache-busting version from image_url; ignored' })) }),
      responses: { 200: { description: 'the image bytes (image/jpeg, image/png, image/webp or image/gif)' }, 404: { description: 'no such agent, or it has no avatar', schema: ErrorBody } },
      handler: async (ctx) => {
        const agent = await loadAgent(ctx, ctx.params.agent_id);
        if (!agent.avatar_key || !agent.avatar_media_type) throw new AppError('not_found', 'this agent has no avatar');
        const bytes = await getStoredObject(ctx.services.objects, agent.avatar_key);
        return { status: 200, body: bytes, contentType: agent.avatar_media_type, headers: { 'cache-control': 'private, max-age=300', 'x-content-type-options': 'nosniff' } };
      },
    }),
  ];
}
