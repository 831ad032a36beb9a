import { createHash, randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { access, mkdir, open, readFile, rename, rmdir, unlink } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { objectFilePath, TEMP_DIR_NAME } from './directory-layout.js';
import { decodeObjectFile, encodeObjectHeader, readObjectHead } from './directory-object-file.js';
import { walkKeys } from './directory-walk.js';
import { normalizeListOptions } from './list-options.js';
import { assertObjectKey } from './object-key.js';
import { OBJECT_STORE_ERROR, ObjectStoreError } from './object-store-error.js';
import type { HeadResult, ListOptions, ListResult, ObjectStore, PutOptions, PutResult } from './object-store.js';

export interface DirectoryStoreOptions {
  /** Root folder; created on first write or check. Resolved against the working directory. */
  directory: string;
}

// Objects can hold conversation content: owner-only, like the rest of ./data.
const FILE_MODE = 0o600;
const DIR_MODE = 0o700;
// A rename can lose its target folder to a concurrent delete pruning empty folders; a few
// retries of mkdir + rename settle that race.
const RENAME_ATTEMPTS = 3;

function errnoOf(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

function isAbsent(err: unknown): boolean {
  const code = errnoOf(err);
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** Any other file-system failure (EACCES, EIO, ENOSPC, EROFS…) means the store cannot serve. */
function unavailable(op: string, err: unknown): ObjectStoreError {
  if (err instanceof ObjectStoreError) return err;
  return new ObjectStoreError(OBJECT_STORE_ERROR.UNAVAILABLE, `directory object store: ${op} failed (${errnoOf(err) ?? 'error'})`, {
    cause: err,
  });
}

/** fsync a folder so a rename or mkdir inside it survives a crash. */
async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } catch (err) {
    // Some file systems cannot fsync a folder; the data file itself was synced already.
    if (errnoOf(err) !== 'EINVAL' && errnoOf(err) !== 'EISDIR' && errnoOf(err) !== 'EPERM') throw err;
  } finally {
    await handle.close();
  }
}

/** mkdir -p, then fsync every folder whose entry list changed so the new path is durable. */
async function makeDirs(dir: string): Promise<void> {
  const first = await mkdir(dir, { recursive: true, mode: DIR_MODE });
  if (first === undefined) return;
  for (let d = dir; ; d = dirname(d)) {
    await syncDir(dirname(d));
    if (d === first) break;
  }
}

export function createDirectoryStore(options: DirectoryStoreOptions): ObjectStore {
  const root = resolve(options.directory);
  const tempDir = join(root, TEMP_DIR_NAME);

  async function writeTemp(body: Uint8Array, contentType: string | undefined): Promise<string> {
    await mkdir(tempDir, { recursive: true, mode: DIR_MODE });
    const temp = join(tempDir, `${process.pid}-${randomUUID()}`);
    const handle = await open(temp, 'wx', FILE_MODE);
    let written = false;
    try {
      // FileHandle.writeFile writes everything from the current position (looping over short
      // writes), so two calls lay the header and then the body down back to back.
      await handle.writeFile(encodeObjectHeader({ contentType }));
      await handle.writeFile(body);
      // The bytes must be on disk before the rename publishes them, or a crash could leave
      // a published but empty or partial object.
      await handle.sync();
      written = true;
    } finally {
      await handle.close();
      if (!written) await unlink(temp).catch(() => undefined);
    }
    return temp;
  }

  async function publish(temp: string, path: string): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      await makeDirs(dirname(path));
      try {
        // rename(2) replaces the target atomically: readers see the old object or the new one.
        await rename(temp, path);
        break;
      } catch (err) {
        if (errnoOf(err) !== 'ENOENT' || attempt >= RENAME_ATTEMPTS) throw err;
      }
    }
    await syncDir(dirname(path));
  }

  async function pruneEmptyFolders(from: string): Promise<void> {
    for (let dir = from; dir !== root && dir.startsWith(root); dir = dirname(dir)) {
      try {
        await rmdir(dir);
      } catch {
        // Not empty (or already gone): stop, its ancestors are not empty either.
        return;
      }
    }
  }

  return {
    async put(key: string, body: Uint8Array, opts?: PutOptions): Promise<PutResult> {
      assertObjectKey(key);
      const path = objectFilePath(root, key);
      const sha256 = createHash('sha256').update(body).digest('hex');
      let temp: string | undefined;
      try {
        temp = await writeTemp(body, opts?.contentType);
        await publish(temp, path);
      } catch (err) {
        if (temp !== undefined) await unlink(temp).catch(() => undefined);
        throw unavailable('put', err);
      }
      return { size: body.byteLength, sha256 };
    },

    async get(key: string): Promise<Uint8Array | null> {
      assertObjectKey(key);
      const path = objectFilePath(root, key);
      let file: Buffer;
      try {
        file = await readFile(path);
      } catch (err) {
        if (isAbsent(err)) return null;
        throw unavailable('get', err);
      }
      return decodeObjectFile(file).body;
    },

    async head(key: string): Promise<HeadResult | null> {
      assertObjectKey(key);
      const path = objectFilePath(root, key);
      let handle;
      try {
        handle = await open(path, 'r');
      } catch (err) {
        if (isAbsent(err)) return null;
        throw unavailable('head', err);
      }
      try {
        const { header, size } = await readObjectHead(handle);
        return header.contentType === undefined ? { size } : { size, contentType: header.contentType };
      } catch (err) {
        throw unavailable('head', err);
      } finally {
        await handle.close();
      }
    },

    async delete(key: string): Promise<void> {
      assertObjectKey(key);
      const path = objectFilePath(root, key);
      try {
        await unlink(path);
      } catch (err) {
        // Idempotent: an absent object is already deleted.
        if (isAbsent(err)) return;
        throw unavailable('delete', err);
      }
      await pruneEmptyFolders(dirname(path));
    },

    async list(prefix: string, opts?: ListOptions): Promise<ListResult> {
      const { limit, after } = normalizeListOptions(opts);
      const keys: string[] = [];
      let more = false;
      try {
        for await (const key of walkKeys(root, prefix, after)) {
          // One key past the page tells whether there is a next page.
          if (keys.length === limit) {
            more = true;
            break;
          }
          keys.push(key);
        }
      } catch (err) {
        throw unavailable('list', err);
      }
      const last = keys[keys.length - 1];
      return more && last !== undefined ? { keys, next: last } : { keys };
    },

    async check(): Promise<void> {
      try {
        await mkdir(tempDir, { recursive: true, mode: DIR_MODE });
        await access(root, constants.R_OK | constants.W_OK);
        await access(tempDir, constants.R_OK | constants.W_OK);
      } catch (err) {
        throw unavailable('check', err);
      }
    },

    // Nothing to release: every operation opens and closes its own file handles.
    async close(): Promise<void> {},
  };
}
