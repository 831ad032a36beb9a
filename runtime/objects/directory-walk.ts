import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { classifyEntry } from './directory-layout.js';
import { compareKeys } from './list-options.js';

interface WalkEntry {
  path: string;
  kind: 'object' | 'folder';
  /** The key of an object, or the key prefix (ending in `/`) that every key in a folder has. */
  sortKey: string;
}

async function readEntries(dir: string, keyPrefix: string): Promise<WalkEntry[]> {
  let dirents;
  try {
    dirents = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    // A folder pruned by a concurrent delete is simply empty now.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return [];
    throw err;
  }
  const entries: WalkEntry[] = [];
  for (const dirent of dirents) {
    const entry = classifyEntry(dirent.name, dirent.isDirectory(), dirent.isFile());
    if (entry === null) continue;
    const sortKey = keyPrefix + entry.segment + (entry.kind === 'folder' ? '/' : '');
    entries.push({ path: join(dir, dirent.name), kind: entry.kind, sortKey });
  }
  // Sorting siblings by object key / folder prefix yields global key order: two siblings'
  // sort keys differ before either ends, or one is an object key that prefixes (and so
  // precedes) every key of the other, a folder.
  return entries.sort((a, b) => compareKeys(a.sortKey, b.sortKey));
}

/**
 * Yields the keys under `root` that start with `prefix` and sort after `after`, in ascending
 * UTF-8 order, descending only into folders that can hold such keys. The caller stops
 * iterating once it has a page.
 */
export async function* walkKeys(root: string, prefix: string, after: string | undefined): AsyncGenerator<string> {
  yield* walkFolder(root, '', prefix, after);
}

async function* walkFolder(dir: string, keyPrefix: string, prefix: string, after: string | undefined): AsyncGenerator<string> {
  for (const entry of await readEntries(dir, keyPrefix)) {
    const key = entry.sortKey;
    if (entry.kind === 'object') {
      if (!key.startsWith(prefix)) continue;
      if (after !== undefined && compareKeys(key, after) <= 0) continue;
      yield key;
      continue;
    }
    if (!key.startsWith(prefix) && !prefix.startsWith(key)) continue;
    // Every key in the folder starts with `key`; if `key` sorts before `after` and is not a
    // prefix of it, they all do, so the whole folder is skipped.
    if (after !== undefined && compareKeys(key, after) < 0 && !after.startsWith(key)) continue;
    yield* walkFolder(entry.path, key, prefix, after);
  }
}
