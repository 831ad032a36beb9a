import { constants } from 'node:fs';
import { lstat, mkdir, open, readdir, realpath } from 'node:fs/promises';
import { posix, join, sep } from 'node:path';
import { EnvironmentPathError, type FileEntry, type ReadFileResult } from '../environment-client.js';
import { SANDBOX_SKILLS, SANDBOX_WORKDIR } from './local-sandbox.js';

// The file tools of a `local` environment work on the host side of its directory (no sandbox
// start per call). Commands in the sandbox can leave symbolic links behind, so a path is never
// trusted as given: the real path of what exists must stay inside the environment's directory,
// and the final component is opened with O_NOFOLLOW. Operations on one environment are
// serialized by the caller (runtime/environments), so no sandboxed command of it runs while a
// file tool resolves a path.

/** Whether a sandbox path is `root` or below it. */
export const isUnder = (sandboxPath: string, root: string): boolean => {
  const normal = posix.normalize(sandboxPath);
  return normal === root || normal.startsWith(`${root}/`);
};

/**
 * The host path of a sandbox path under `root`, the sandbox folder that `directory` is mounted
 * at: /workspace (the environment's directory) or /skills (its skill packages).
 */
export function hostPath(directory: string, sandboxPath: string, root: string = SANDBOX_WORKDIR): string {
  const normal = posix.normalize(sandboxPath);
  if (!isUnder(normal, root)) {
    throw new EnvironmentPathError(`${sandboxPath} is outside ${SANDBOX_WORKDIR}; only files under ${SANDBOX_WORKDIR} (and the skill packages under ${SANDBOX_SKILLS}) are kept in a local environment`);
  }
  const relative = normal.slice(root.length).replace(/^\/+/, '');
  return relative === '' ? directory : join(directory, ...relative.split('/'));
}

async function assertInside(directory: string, path: string, shown: string): Promise<void> {
  const root = await realpath(directory);
  const real = await realpath(path);
  if (real !== root && !real.startsWith(`${root}${sep}`)) throw new EnvironmentPathError(`${shown} leads outside the environment (through a symbolic link)`);
}

function describe(error: unknown, shown: string): never {
  const code = (error as NodeJS.ErrnoException).code;
  if (error instanceof EnvironmentPathError) throw error;
  if (code === 'ENOENT') throw new EnvironmentPathError(`${shown} does not exist`);
  if (code === 'ELOOP') throw new EnvironmentPathError(`${shown} is a symbolic link; links are not followed`);
  if (code === 'EISDIR') throw new EnvironmentPathError(`${shown} is a directory`);
  if (code === 'ENOTDIR') throw new EnvironmentPathError(`a parent of ${shown} is not a directory`);
  if (code === 'EACCES' || code === 'EPERM') throw new EnvironmentPathError(`${shown} is not accessible`);
  throw error;
}

export async function readLocalFile(directory: string, sandboxPath: string, maxBytes: number, root: string = SANDBOX_WORKDIR): Promise<ReadFileResult> {
  const path = hostPath(directory, sandboxPath, root);
  if (path === directory) throw new EnvironmentPathError(`${sandboxPath} is a directory`);
  try {
    await assertInside(directory, join(path, '..'), sandboxPath);
    const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      const stat = await handle.stat();
      if (!stat.isFile()) throw new EnvironmentPathError(`${sandboxPath} is not a regular file`);
      const buffer = Buffer.alloc(Math.min(stat.size, maxBytes));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
      return { content: buffer.subarray(0, bytesRead), size: stat.size };
    } finally {
      await handle.close();
    }
  } catch (error) {
    describe(error, sandboxPath);
  }
}

export async function writeLocalFile(directory: string, sandboxPath: string, content: Buffer, root: string = SANDBOX_WORKDIR): Promise<void> {
  const path = hostPath(directory, sandboxPath, root);
  if (path === directory) throw new EnvironmentPathError(`${sandboxPath} is the environment's directory`);
  try {
    const parent = join(path, '..');
    // Every existing ancestor is checked before anything is created below it.
    await assertInside(directory, await deepestExisting(parent), sandboxPath);
    await mkdir(parent, { recursive: true });
    await assertInside(directory, parent, sandboxPath);
    const handle = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o644);
    try {
      await handle.writeFile(content);
    } finally {
      await handle.close();
    }
  } catch (error) {
    describe(error, sandboxPath);
  }
}

async function deepestExisting(path: string): Promise<string> {
  for (let current = path; ; current = join(current, '..')) {
    try {
      await lstat(current);
      return current;
    } catch {
      if (current === join(current, '..')) return current;
    }
  }
}

export async function listLocalFiles(directory: string, sandboxPath: string, recursive: boolean, maxEntries: number, root: string = SANDBOX_WORKDIR): Promise<FileEntry[]> {
  const start = hostPath(directory, sandboxPath, root);
  const base = posix.normalize(sandboxPath).replace(/\/+$/, '') || '/';
  const entries: FileEntry[] = [];
  try {
    await assertInside(directory, start, sandboxPath);
    const stat = await lstat(start);
    if (!stat.isDirectory()) throw new EnvironmentPathError(`${sandboxPath} is not a directory`);
    // Breadth first, links listed but never followed, stopping at maxEntries.
    const queue: Array<{ host: string; shown: string }> = [{ host: start, shown: base }];
    while (queue.length > 0 && entries.length < maxEntries) {
      const { host, shown } = queue.shift()!;
      const children = (await readdir(host, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
      for (const child of children) {
        if (entries.length >= maxEntries) break;
        const childHost = join(host, child.name);
        const childShown = posix.join(shown, child.name);
        const type = child.isSymbolicLink() ? 'symlink' : child.isDirectory() ? 'directory' : child.isFile() ? 'file' : 'other';
        const size = type === 'file' ? (await lstat(childHost)).size : 0;
        entries.push({ path: childShown, type, size });
        if (recursive && type === 'directory') queue.push({ host: childHost, shown: childShown });
      }
    }
    return entries;
  } catch (error) {
    describe(error, sandboxPath);
  }
}
