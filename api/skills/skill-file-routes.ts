import { AppError, getSkillRevision, readSkillFile, type SkillRevisionRow } from '../../runtime/index.js';
import { defineRoute, type ApiContext, type ApiRouteSpec } from '../framework/index.js';
import { ErrorBody, ListOf } from '../schemas/index.js';
import { loadSkill } from './skill-routes.js';
import { SkillFileParams, SkillFileView, SkillRevisionParams } from './skill-schemas.js';

async function loadRevision(ctx: ApiContext<{ skill_id: string; revision_id: string }, unknown, unknown>): Promise<SkillRevisionRow> {
  const skill = await loadSkill(ctx, ctx.params.skill_id);
  const revision = await getSkillRevision(ctx.services.pool, ctx.workspaceId, skill.id, ctx.params.revision_id);
  if (!revision) throw new AppError('not_found', 'skill revision not found');
  return revision;
}

/** RFC 6266 filename* of the path's last segment. */
const attachment = (path: string): string => `attachment; filename*=UTF-8''${encodeURIComponent(path.split('/').pop() ?? path)}`;

export function skillFileRoutes(): ApiRouteSpec[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/v1/skills/{skill_id}/revisions/{revision_id}/files',
      operationId: 'listSkillFiles',
      summary: "The files of a revision's package, sorted by path (one page: a package holds at most 500 files)",
      tag: 'skills',
      params: SkillRevisionParams,
      responses: { 200: { description: 'the files', schema: ListOf(SkillFileView) } },
      handler: async (ctx) => ({ status: 200, body: { items: (await loadRevision(ctx)).files, next_cursor: null } }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/skills/{skill_id}/revisions/{revision_id}/files/{path}',
      operationId: 'getSkillFile',
      summary: 'One file of a revision, byte for byte (path percent-encoded as one segment)',
      description: 'Served as application/octet-stream with Content-Disposition attachment and an X-Content-SHA256 header.',
      tag: 'skills',
      params: SkillFileParams,
      responses: { 200: { description: 'the file bytes' }, 404: { description: 'no such skill, revision or file', schema: ErrorBody } },
      handler: async (ctx) => {
        const revision = await loadRevision(ctx);
        const bytes = await readSkillFile(ctx.services.objects, revision, ctx.params.path);
        const sha256 = revision.files.find((f) => f.path === ctx.params.path)!.sha256;
        return {
          status: 200,
          body: bytes,
          contentType: 'application/octet-stream',
          headers: { 'content-disposition': attachment(ctx.params.path), 'x-content-type-options': 'nosniff', 'x-content-sha256': sha256 },
        };
      },
    }),
  ];
}
