import { posix } from 'node:path';
import { readSkillFile } from '../agents/index.js';
import { AppError } from '../errors/index.js';
import { EnvironmentPathError, shellQuote, skillPackagesRoot, type EnvironmentClient, type EnvironmentInstance } from '../providers/index.js';
import { getSkillRevision, listPlacedSkillPackages, recordPlacedSkillPackage, type EnvironmentRow } from '../stores/index.js';
import { instanceOf, providerClient, vendorProblem, type EnvironmentRuntime } from './environment-runtime.js';

// Skill packages in environments (TOOLS.md "Skills in runs": with an environment, the packages
// are also placed under /skills/<name>/; skillPackagesRoot says where a type keeps them). On the worker host, when a run's environment is
// mounted: each pinned package whose revision is not yet in the environment (under that
// folder) has its files written there through the type's own file API (the local type maps
// /skills to a folder of its own; the vendor types upload), then is recorded in
// environment_skill_packages, so a thread's later runs with the same revision upload nothing.
// A package of another revision (or placed under another folder name) first has its older
// folder removed, so files the new revision dropped do not linger: through the type's
// removeTree where commands cannot write there (local), else `rm -rf` through exec.

const FILE_CALL_TIMEOUT_MS = 60_000;

export interface SkillPackagePlacement {
  skill_id: string;
  revision_id: string;
  /** Folder name under /skills (a safe path component). */
  folder: string;
}

/** Whether every package is already in the environment at its revision and folder (one query). */
export async function skillPackagesPlaced(rt: EnvironmentRuntime, env: EnvironmentRow, packages: readonly Pick<SkillPackagePlacement, 'skill_id' | 'revision_id'>[]): Promise<boolean> {
  if (packages.length === 0) return true;
  const placed = await listPlacedSkillPackages(rt.services.pool, env.id);
  return packages.every((p) => placed.some((q) => q.skill_id === p.skill_id && q.revision_id === p.revision_id));
}

/** Places what is missing; returns the folders written. Vendor failures become AppErrors. */
export async function placeSkillPackages(rt: EnvironmentRuntime, env: EnvironmentRow, packages: readonly SkillPackagePlacement[], signal?: AbortSignal): Promise<string[]> {
  for (const p of packages) {
    if (!/^[A-Za-z0-9._-]{1,64}$/.test(p.folder) || p.folder === '.' || p.folder === '..') throw new AppError('internal', `not a skill folder name: ${JSON.stringify(p.folder)}`);
  }
  return rt.locks.run(env.id, async () => {
    const placed = await listPlacedSkillPackages(rt.services.pool, env.id);
    const missing = packages.filter((p) => !placed.some((q) => q.skill_id === p.skill_id && q.revision_id === p.revision_id && q.name === p.folder));
    if (missing.length === 0) return [];
    const { client } = await providerClient(rt, env.workspace_id, env.provider_id, true);
    const instance = instanceOf(env);
    const written: string[] = [];
    for (const p of missing) {
      const revision = await getSkillRevision(rt.services.pool, env.workspace_id, p.skill_id, p.revision_id);
      if (!revision) continue; // a revision the workspace lost: the run goes on without it, as in prepareSkills
      const older = placed.find((q) => q.skill_id === p.skill_id);
      if (older) {
        for (const folder of new Set([older.name, p.folder])) await removeFolder(client, instance, env, posix.join(skillPackagesRoot(env.type), folder), signal);
      }
      for (const file of revision.files) {
        const content = await readSkillFile(rt.services.objects, revision, file.path);
        const bound = AbortSignal.timeout(FILE_CALL_TIMEOUT_MS);
        try {
          await client.writeFile(instance, posix.join(skillPackagesRoot(env.type), p.folder, file.path), content, signal ? AbortSignal.any([bound, signal]) : bound);
        } catch (error) {
          if (error instanceof EnvironmentPathError) throw new AppError('unavailable', `placing skill ${p.folder} in the environment: ${error.message}`, { details: { reason: 'refused' } });
          throw vendorProblem(error, `place skill ${p.folder} in the environment`);
        }
      }
      await recordPlacedSkillPackage(rt.services.pool, env.id, { skill_id: p.skill_id, revision_id: p.revision_id, name: p.folder });
      written.push(p.folder);
    }
    return written;
  });
}

/** Removes a placed package's folder before another revision is written there. */
async function removeFolder(client: EnvironmentClient, instance: EnvironmentInstance, env: EnvironmentRow, path: string, signal?: AbortSignal): Promise<void> {
  const bound = AbortSignal.timeout(FILE_CALL_TIMEOUT_MS);
  const both = signal ? AbortSignal.any([bound, signal]) : bound;
  try {
    if (client.removeTree) return await client.removeTree(instance, path, both);
    const cwd = client.defaultWorkingDirectory(env.config);
    const result = await client.exec(instance, { command: `rm -rf -- ${shellQuote(path)}`, cwd, timeout_ms: FILE_CALL_TIMEOUT_MS, output_limit: 4096 }, both);
    if (result.exit_code !== 0) throw new EnvironmentPathError(`rm -rf ${path} exited ${result.exit_code}: ${result.stderr.text.trim()}`);
  } catch (error) {
    if (error instanceof EnvironmentPathError) throw new AppError('unavailable', `replacing a skill package in the environment: ${error.message}`, { details: { reason: 'refused' } });
    throw vendorProblem(error, `remove the older skill package ${path} from the environment`);
  }
}
