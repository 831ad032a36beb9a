// Skills inside runs (TOOLS.md "Skills in runs"): the revision's pinned skills are listed in
// the system prompt by name and description, and `read_skill_file` returns a file of a pinned
// package. The packages live in the object store, so reading is a host request; the host
// checks again that the skill is pinned with this run (the model names skills, not ids).
import type { SkillSummary } from '../../attempt-protocol.js';
import { HostRequestError } from '../../attempt-port.js';
import { ToolError, type ServerTool } from '../tool-types.js';

export const READ_SKILL_FILE_TOOL = 'read_skill_file';
export const SKILLS_TOOLSET = 'skills';

/**
 * The folder of each skill under /skills, in order: its name made a safe path component
 * (characters other than letters, digits, `.`, `_` and `-` become `-`), unique in the run. The
 * worker host places the packages there and the prompt names the same folders.
 */
export function skillFolders(skills: readonly Pick<SkillSummary, 'name'>[]): string[] {
  const taken = new Set<string>();
  return skills.map((s) => {
    let base = s.name.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[-.]+|-+$/g, '').slice(0, 56) || 'skill';
    if (base === '.' || base === '..') base = 'skill';
    let folder = base;
    for (let n = 2; taken.has(folder); n++) folder = `${base}-${n}`;
    taken.add(folder);
    return folder;
  });
}

/**
 * The system prompt section that introduces the pinned skills; empty without skills. With an
 * environment (`skillsRoot`: where its type keeps the packages), it also says where each is.
 */
export function skillsPrompt(skills: readonly SkillSummary[], skillsRoot?: string): string {
  if (skills.length === 0) return '';
  const folders = skillFolders(skills);
  const lines = skills.map((s, i) => `- ${s.name}: ${s.description || '(no description)'}${skillsRoot ? ` (files in your environment at ${skillsRoot}/${folders[i]}/)` : ''}`);
  return [
    'You have these skills. Each is a package of files; its SKILL.md explains when and how to use it.',
    `Read a skill's files with the ${READ_SKILL_FILE_TOOL} tool (skill name and file path, e.g. "SKILL.md") before you use it.`,
    ...(skillsRoot ? [`Each package is also placed in your environment under ${skillsRoot}/<folder>/, so its scripts can be run with the shell.`] : []),
    ...lines,
  ].join('\n');
}

export function readSkillFileTool(skills: readonly SkillSummary[]): ServerTool {
  const names = skills.map((s) => s.name);
  return {
    name: READ_SKILL_FILE_TOOL,
    description: `Returns a file of one of your skills' packages. Skills: ${names.join(', ')}.`,
    parameters: {
      type: 'object',
      properties: {
        skill: { type: 'string', enum: names, description: 'The skill name.' },
        path: { type: 'string', minLength: 1, maxLength: 512, description: 'Path of the file inside the package, e.g. SKILL.md.' },
      },
      required: ['skill', 'path'],
      additionalProperties: false,
    },
    permission: 'allow',
    execute: async (args, ctx) => {
      const skill = skills.find((s) => s.name === args.skill);
      if (!skill) throw new ToolError(`unknown skill ${JSON.stringify(args.skill)}`);
      const path = String(args.path).replace(/^\.?\//, '');
      if (!skill.files.includes(path)) throw new ToolError(`skill ${skill.name} has no file ${JSON.stringify(path)}; its files: ${skill.files.slice(0, 50).join(', ')}`);
      try {
        return await ctx.host.request('skill.read_file', { skill_id: skill.skill_id, revision_id: skill.revision_id, path }, ctx.signal);
      } catch (err) {
        if (err instanceof HostRequestError && err.code === 'not_found') throw new ToolError(err.message);
        throw err;
      }
    },
  };
}
