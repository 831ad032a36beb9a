import type { Queryable } from '../db/index.js';
import { AppError } from '../errors/index.js';
import { ID_PREFIX, newId } from '../ids/index.js';
import type { ObjectStore } from '../objects/index.js';
import {
  getSkillRevision,
  insertAuditEvent,
  insertSkill,
  insertSkillRevision,
  lockSkill,
  updateSkill,
  type SkillRevisionRow,
  type SkillRow,
} from '../stores/index.js';
import { publishHeadRevision, type HeadActor, type HeadTable } from './head-operations.js';
import type { SkillPackage } from './skill-package.js';
import { getStoredObject, putStoredObject, skillFileKey } from './stored-objects.js';

export const skillTable: HeadTable<SkillRow, SkillRevisionRow> = {
  resource: 'skill',
  lock: lockSkill,
  update: updateSkill,
  getRevision: getSkillRevision,
};

/**
 * Writes a package's files to the object store before the revision's transaction. Keys are
 * content digests, so a file already stored is written again harmlessly and a transaction
 * that rolls back leaves at most unreferenced, identical copies behind.
 */
export async function storeSkillPackage(objects: ObjectStore, workspaceId: string, pkg: SkillPackage): Promise<void> {
  const written = new Set<string>();
  for (const [i, file] of pkg.files.entries()) {
    const { sha256 } = pkg.manifest[i]!;
    if (written.has(sha256)) continue;
    written.add(sha256);
    await putStoredObject(objects, skillFileKey(workspaceId, sha256), file.bytes, 'application/octet-stream');
  }
}

/** Creates a skill head and its revision 1 from a stored package, in the caller's transaction. */
export async function createSkill(
  tx: Queryable,
  input: { workspaceId: string; name: string; description?: string; labels?: Record<string, string>; pkg: SkillPackage; note?: string },
  actor: HeadActor,
): Promise<{ skill: SkillRow; revision: SkillRevisionRow }> {
  const skillId = newId(ID_PREFIX.skill);
  const revisionId = newId(ID_PREFIX.skillRevision);
  const skill = await insertSkill(tx, { id: skillId, workspace_id: input.workspaceId, name: input.name, description: input.description ?? '', labels: input.labels ?? {}, default_revision_id: revisionId, created_by_id: actor.id });
  const revision = await insertSkillRevision(tx, { id: revisionId, workspace_id: input.workspaceId, skill_id: skillId, number: 1, note: input.note ?? '', digest: input.pkg.digest, files: input.pkg.manifest, created_by_id: actor.id });
  await insertAuditEvent(tx, {
    workspace_id: input.workspaceId,
    actor_id: actor.id,
    action: 'skill.created',
    resource_type: 'skill',
    resource_id: skillId,
    request_id: actor.requestId,
    changes: { name: skill.name, revision_id: revisionId, digest: revision.digest },
  });
  return { skill, revision };
}

/** Publishes a stored package as the skill's next revision (identical content creates nothing). */
export async function publishSkillRevision(
  tx: Queryable,
  target: { workspaceId: string; skillId: string; precondition: (head: SkillRow) => void },
  input: { pkg: SkillPackage; makeDefault: boolean; note?: string },
  actor: HeadActor,
): Promise<{ skill: SkillRow; revision: SkillRevisionRow; created: boolean }> {
  const insert = (head: SkillRow, number: number) =>
    insertSkillRevision(tx, { id: newId(ID_PREFIX.skillRevision), workspace_id: head.workspace_id, skill_id: head.id, number, note: input.note ?? '', digest: input.pkg.digest, files: input.pkg.manifest, created_by_id: actor.id });
  const result = await publishHeadRevision(tx, skillTable, { workspaceId: target.workspaceId, id: target.skillId, precondition: target.precondition }, { digest: input.pkg.digest, makeDefault: input.makeDefault, insert }, actor);
  return { skill: result.head, revision: result.revision, created: result.created };
}

/** The bytes of one file of a revision, exactly as uploaded. */
export async function readSkillFile(objects: ObjectStore, revision: SkillRevisionRow, path: string): Promise<Buffer> {
  const entry = revision.files.find((f) => f.path === path);
  if (!entry) throw new AppError('not_found', 'file not found in this revision');
  return getStoredObject(objects, skillFileKey(revision.workspace_id, entry.sha256));
}
