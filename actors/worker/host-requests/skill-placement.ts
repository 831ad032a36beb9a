// A run's pinned skill packages placed in its environment (TOOLS.md "Skills in runs"), on the
// worker host, each time the run's environment is mounted (at run start, or at the first
// environment call with lazy_environment; later calls of the attempt skip it): when every pinned
// revision is recorded as placed in that environment this is one query; otherwise the packages are read
// and their missing revisions written under /skills/<folder>/ (runtime/environments).
import { placeSkillPackages, skillPackagesPlaced, type EnvironmentRow, type EnvironmentRuntime, type RunRow, type Services } from '../../../runtime/index.js';
import { skillFolders } from '../../attempt/index.js';
import { prepareSkills } from './skill-summaries.js';

/**
 * The environment each attempt's run (the host's RunRow object, one per attempt) already has its
 * packages in: later environment calls of the attempt skip even the one query. A run's pinned
 * revisions never change, so only a different environment (one replaced mid-run) is checked again.
 */
const placedForRun = new WeakMap<RunRow, string>();

export async function placeRunSkills(ctx: { services: Services; run: RunRow; environments: EnvironmentRuntime; signal?: AbortSignal }, env: EnvironmentRow): Promise<void> {
  if (placedForRun.get(ctx.run) === env.id) return;
  const pinned = (ctx.run.config.skills as Array<{ skill_id: string; revision_id: string }> | undefined) ?? [];
  if (pinned.length > 0 && !(await skillPackagesPlaced(ctx.environments, env, pinned))) {
    // The folders follow the names the model sees (front matter), as the prompt says them.
    const skills = await prepareSkills(ctx.services, ctx.run);
    const folders = skillFolders(skills);
    await placeSkillPackages(ctx.environments, env, skills.map((s, i) => ({ skill_id: s.skill_id, revision_id: s.revision_id, folder: folders[i]! })), ctx.signal);
  }
  placedForRun.set(ctx.run, env.id);
}
