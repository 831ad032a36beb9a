import { AppError } from '../errors/index.js';
import type { SkillFileEntry } from '../stores/index.js';
import { contentDigest, contentSha256 } from './content-digest.js';

/**
 * A skill package is a folder of files: SKILL.md (the instructions, required at the root) plus
 * resources (scripts, references, assets). Limits, documented in the README: at most 500
 * files, 5 MiB per file, 10 MiB in all, paths of at most 512 UTF-8 bytes and 16 segments.
 */
export const SKILL_PACKAGE_LIMITS = { maxFiles: 500, maxFileBytes: 5 * 1024 * 1024, maxPackageBytes: 10 * 1024 * 1024, maxPathBytes: 512, maxSegments: 16 } as const;
export const SKILL_INSTRUCTIONS_FILE = 'SKILL.md';

export interface SkillPackageFile {
  path: string;
  bytes: Buffer;
}

export interface SkillPackage {
  /** Sorted by path. */
  files: SkillPackageFile[];
  manifest: SkillFileEntry[];
  digest: string;
}

// C0 controls (NUL among them), DEL and C1 controls break file systems, archives and logs.
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;

const invalid = (message: string, field: string): AppError => new AppError('invalid_argument', `${field}: ${message}`, { details: { field } });

/**
 * Path safety: a package is unpacked into a folder, so every path must stay inside it on any
 * operating system: relative, '/'-separated, no empty, '.' or '..' segment, no backslash (a
 * separator on Windows), no drive letter, no control character.
 */
export function skillPathProblem(path: string): string | null {
  if (path.length === 0) return 'path is empty';
  if (Buffer.byteLength(path, 'utf8') > SKILL_PACKAGE_LIMITS.maxPathBytes) return `path is longer than ${SKILL_PACKAGE_LIMITS.maxPathBytes} bytes`;
  if (CONTROL_CHARS.test(path)) return 'path contains a control character (NUL included)';
  if (path.includes('\\')) return 'path contains a backslash';
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) return 'path is absolute';
  const segments = path.split('/');
  if (segments.length > SKILL_PACKAGE_LIMITS.maxSegments) return `path has more than ${SKILL_PACKAGE_LIMITS.maxSegments} segments`;
  if (segments.some((s) => s === '..')) return 'path contains ..';
  if (segments.some((s) => s === '' || s === '.')) return 'path has an empty or . segment';
  return null;
}

/** Refuses exact and case-only duplicates, and a file that is also another file's folder. */
function collisionProblem(files: SkillPackageFile[], field: (path: string) => string): void {
  const folded = new Map<string, string>();
  for (const { path } of files) {
    const key = path.toLowerCase();
    const other = folded.get(key);
    if (other !== undefined) throw invalid(other === path ? 'path appears twice' : `path differs only in case from ${JSON.stringify(other)}`, field(path));
    folded.set(key, path);
  }
  for (const { path } of files) {
    const segments = path.toLowerCase().split('/');
    for (let i = 1; i < segments.length; i++) {
      const folder = segments.slice(0, i).join('/');
      if (folded.has(folder)) throw invalid(`${JSON.stringify(folded.get(folder))} is a file, so it cannot also be a folder`, field(path));
    }
  }
}

/** Checks a package's files against the rules and limits and computes its manifest and digest. */
export function buildSkillPackage(input: SkillPackageFile[], field: (path: string) => string): SkillPackage {
  if (input.length > SKILL_PACKAGE_LIMITS.maxFiles) throw invalid(`a package holds at most ${SKILL_PACKAGE_LIMITS.maxFiles} files`, field(''));
  let total = 0;
  for (const file of input) {
    const problem = skillPathProblem(file.path);
    if (problem) throw invalid(problem, field(file.path));
    if (file.bytes.length > SKILL_PACKAGE_LIMITS.maxFileBytes) throw new AppError('payload_too_large', `${field(file.path)}: a file holds at most ${SKILL_PACKAGE_LIMITS.maxFileBytes} bytes`);
    total += file.bytes.length;
  }
  if (total > SKILL_PACKAGE_LIMITS.maxPackageBytes) throw new AppError('payload_too_large', `a package holds at most ${SKILL_PACKAGE_LIMITS.maxPackageBytes} bytes`);
  collisionProblem(input, field);
  if (!input.some((f) => f.path === SKILL_INSTRUCTIONS_FILE)) throw invalid(`a package needs ${SKILL_INSTRUCTIONS_FILE} at its root`, field(SKILL_INSTRUCTIONS_FILE));
  const files = [...input].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const manifest = files.map((f) => ({ path: f.path, size: f.bytes.length, sha256: contentSha256(f.bytes) }));
  // The digest covers paths and contents only, so equal folders give equal digests.
  return { files, manifest, digest: contentDigest({ files: manifest.map((f) => [f.path, f.sha256]) }) };
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A JSON file map: a string is UTF-8 text; `{content_base64}` carries binary files. */
export type SkillFileMap = Record<string, string | { content_base64: string }>;

export function skillFilesFromMap(map: SkillFileMap): SkillPackageFile[] {
  return Object.entries(map).map(([path, value]) => {
    if (typeof value === 'string') return { path, bytes: Buffer.from(value, 'utf8') };
    if (!BASE64.test(value.content_base64)) throw invalid('content_base64 is not valid base64', `body.files[${JSON.stringify(path)}]`);
    return { path, bytes: Buffer.from(value.content_base64, 'base64') };
  });
}
