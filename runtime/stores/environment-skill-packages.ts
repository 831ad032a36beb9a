import type { Queryable } from '../db/index.js';

// The environment_skill_packages table: which revision of each skill package sits under
// /skills/<name>/ in an environment (runtime/environments/skill-placement.ts writes it after
// the files are uploaded, and reads it to upload only what is missing or changed).

export interface PlacedSkillPackage {
  skill_id: string;
  revision_id: string;
  name: string;
}

export async function listPlacedSkillPackages(db: Queryable, environmentId: string): Promise<PlacedSkillPackage[]> {
  const result = await db.query(`select skill_id, revision_id, name from environment_skill_packages where environment_id = $1 order by skill_id`, [environmentId]);
  return result.rows.map((r: Record<string, unknown>) => ({ skill_id: r.skill_id as string, revision_id: r.revision_id as string, name: r.name as string }));
}

/** Records a package as placed (after its files were written), replacing an older revision's row. */
export async function recordPlacedSkillPackage(db: Queryable, environmentId: string, placed: PlacedSkillPackage): Promise<void> {
  await db.query(
    `insert into environment_skill_packages (environment_id, skill_id, revision_id, name) values ($1, $2, $3, $4)
     on conflict (environment_id, skill_id) do update set revision_id = excluded.revision_id, name = excluded.name, placed_at = now()`,
    [environmentId, placed.skill_id, placed.revision_id, placed.name],
  );
}
