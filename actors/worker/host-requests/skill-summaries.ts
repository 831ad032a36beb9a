// The pinned skills of a run as the attempt sees them (TOOLS.md "Skills in runs"): name and
// description from each package's SKILL.md front matter (YAML), falling back to the skill
// head's name and description, and the package's file list. Read on the host because the
// packages are in the object store.
import { parse as parseYaml } from 'yaml';
import { getSkill, getSkillRevision, readSkillFile, SKILL_INSTRUCTIONS_FILE, type RunRow, type Services, type SkillRevisionRow } from '../../../runtime/index.js';
import type { SkillSummary } from '../../attempt/index.js';

const MAX_DESCRIPTION = 1024;
const MAX_NAME = 64;

interface FrontMatter {
  name?: string;
  description?: string;
}

export async function prepareSkills(services: Services, run: RunRow): Promise<SkillSummary[]> {
  const refs = (run.config.skills as Array<{ skill_id: string; revision_id: string }> | undefined) ?? [];
  const summaries = await Promise.all(refs.map((ref) => summarise(services, run.workspace_id, ref)));
  const taken = new Set<string>();
  return summaries
    .filter((s): s is SkillSummary => s !== null)
    .map((s) => {
      // Names are what the model calls skills by, so they must be unique in the run.
      let name = s.name;
      for (let n = 2; taken.has(name); n++) name = `${s.name}-${n}`;
      taken.add(name);
      return { ...s, name };
    });
}

async function summarise(services: Services, workspaceId: string, ref: { skill_id: string; revision_id: string }): Promise<SkillSummary | null> {
  const [skill, revision] = await Promise.all([
    getSkill(services.pool, workspaceId, ref.skill_id),
    getSkillRevision(services.pool, workspaceId, ref.skill_id, ref.revision_id),
  ]);
  // Skills are archived, never deleted; a missing one can only be a revision the workspace
  // lost some other way, and the run goes on without it rather than failing.
  if (!skill || !revision) return null;
  const front = await frontMatter(services, revision);
  return {
    skill_id: ref.skill_id,
    revision_id: ref.revision_id,
    name: clean(front.name, MAX_NAME) || clean(skill.name, MAX_NAME) || ref.skill_id,
    description: clean(front.description, MAX_DESCRIPTION) || clean(skill.description, MAX_DESCRIPTION),
    files: revision.files.map((f) => f.path),
  };
}

async function frontMatter(services: Services, revision: SkillRevisionRow): Promise<FrontMatter> {
  if (!revision.files.some((f) => f.path === SKILL_INSTRUCTIONS_FILE)) return {};
  const text = Buffer.from(await readSkillFile(services.objects, revision, SKILL_INSTRUCTIONS_FILE)).toString('utf8');
  return parseFrontMatter(text);
}

/** The YAML block between a leading `---` line and the next `---` line; {} when absent or invalid. */
export function parseFrontMatter(text: string): FrontMatter {
  const match = /^\uFEFF?---\r?\n([\s\S]*?)\r?\n---[ \t]*(\r?\n|$)/.exec(text);
  if (!match) return {};
  try {
    const value: unknown = parseYaml(match[1]!, { maxAliasCount: 10 });
    if (typeof value !== 'object' || value === null) return {};
    const { name, description } = value as Record<string, unknown>;
    return { ...(typeof name === 'string' ? { name } : {}), ...(typeof description === 'string' ? { description } : {}) };
  } catch {
    return {}; // a package author's YAML mistake must not stop runs: the head's text is used
  }
}

function clean(text: string | undefined, max: number): string {
  return (text ?? '').replace(/\s+/g, ' ').trim().slice(0, max);
}
