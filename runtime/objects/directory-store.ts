import { createHash, randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { access, copyFile, link, mkdir, open, readFile, rename, rmdir, unlink } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { objectFilePath, TEMP_DIR_NAME } from './directory-layout.js';
import { decodeObjectFile, encodeObjectHeader, readObjectHead } from './directory-object-file.js';
import { walkKeys } from './directory-walk.js';
import { normalizeListOptions } from './list-options.js';
import { assertObjectKey } from './object-key.js';
import { OBJECT_STORE_ERROR, ObjectStoreError } from './object-store-error.js';
import type { ByteRange, HeadResult, ListOptions, ListResult, ObjectStore, ObjectStream, PutOptions, PutResult, StreamPutOptions } from './object-store.js';
import { countedPieces, SourceError, unwrapSourceError } from './stream-source.js';

export interface DirectoryStoreOptions {
  /** Root folder; created on first write or check. Resolved against the working directory. */
  directory: string;
  /**
   * fsync each object file and its folder before a put resolves (default true). What the store
   * promises either way: a put that resolved is atomic (readers see the old object or the new
   * one, never a torn one) and survives the crash of any process. With fsync it also survives
   * an OS crash or power loss, so a PostgreSQL commit made after the put (a checkpoint pointer,
   * a display page row) never names an object the machine lost. Without it (false), objects
   * written in the last writeback interval (~30 s on Linux) may be missing or empty after an
   * OS crash although the commit pointing to them survived: for machines where that loss is
   * acceptable (development, disposable data). Checkpoints up to
   * objects.inline_checkpoint_max_bytes never come here: they commit inside PostgreSQL.
   */
  fsync?: boolean;
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
function unavailable(op: string, err: unknown): unknown {
  if (err instanceof ObjectStoreError || err instanceof SourceError) return unwrapSourceError(err);
  return new ObjectStoreError(OBJECT_STORE_ERROR.UNAVAILABLE, `directory object store: ${op} failed (${errnoOf(err) ?? 'error'})`, {
    cause: err,
  });
}

/** fsync a folder so a rename or mkdir inside it survives a crash. */
async function syncDir(dir: string, enabled = true): Promise<void> {
  if (!enabled) return;
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
async function makeDirs(dir: string, fsync: boolean): Promise<void> {
  const first = await mkdir(dir, { recursive: true, mode: DIR_MODE });
  if (first === undefined) return;
  for (let d = dir; ; d = dirname(d)) {
    await syncDir(dirname(d), fsync);
    if (d === first) break;
  }
}

async function* emptyBody(): AsyncGenerator<Uint8Array> {}

export function createDirectoryStore(options: DirectoryStoreOptions): ObjectStore {
  const root = resolve(options.directory);
  const tempDir = join(root, TEMP_DIR_NAME);
  const fsync = options.fsync ?? true;
  // Folders this process made or found (and synced): a put into one costs no mkdir. A folder
  // another process pruned meanwhile shows as ENOENT at the rename, which forgets it and
  // makes it again (publish).
  const knownDirs = new Set<string>();
  const ensureDir = async (dir: string): Promise<void> => {
    if (knownDirs.has(dir)) return;
    await makeDirs(dir, fsync);
    knownDirs.add(dir);
  };

  /** A new temp file; a temp folder removed behind this process's back is made again. */
  async function openTemp(): Promise<{ temp: string; handle: Awaited<ReturnType<typeof open>> }> {
    await ensureDir(tempDir);
    const temp = join(tempDir, `${process.pid}-${randomUUID()}`);
    try {
      return { temp, handle: await open(temp, 'wx', FILE_MODE) };
    } catch (err) {
      if (errnoOf(err) !== 'ENOENT') throw err;
      knownDirs.delete(tempDir);
      await ensureDir(tempDir);
      return { temp, handle: await open(temp, 'wx', FILE_MODE) };
    }
  }

  async function writeTemp(body: Uint8Array, contentType: string | undefined): Promise<string> {
    const { temp, handle } = await openTemp();
    let written = false;
    try {
      // FileHandle.writeFile writes everything from the current position (looping over short
      // writes), so two calls lay the header and then the body down back to back.
      await handle.writeFile(encodeObjectHeader({ contentType }));
      await handle.writeFile(body);
      // The bytes must be on disk before the rename publishes them, or an OS crash could leave
      // a published but empty or partial object (see DirectoryStoreOptions.fsync).
      if (fsync) await handle.sync();
      written = true;
    } finally {
      await handle.close();
      if (!written) await unlink(temp).catch(() => undefined);
    }
    return temp;
  }

  /** A temp file written piece by piece (header first), hashed on the way, synced before publishing. */
  async function writeTempStream(body: AsyncIterable<Uint8Array>, opts: StreamPutOptions | undefined): Promise<{ temp: string; size: number; sha256: string }> {
    const { temp, handle } = await openTemp();
    const hash = createHash('sha256');
    let size = 0;
    let written = false;
    try {
      await handle.writeFile(encodeObjectHeader({ contentType: opts?.contentType }));
      // One piece at a time: the next is pulled only after this one is on its way to disk.
      for await (const piece of countedPieces(body, opts?.maxBytes)) {
        hash.update(piece);
        size += piece.byteLength;
        await handle.writeFile(piece);
      }
      if (fsync) await handle.sync();
      written = true;
    } finally {
      await handle.close();
      if (!written) await unlink(temp).catch(() => undefined);
    }
    return { temp, size, sha256: hash.digest('hex') };
  }

  async function publish(temp: string, path: string): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      await ensureDir(dirname(path));
      try {
        // rename(2) replaces the target atomically: readers see the old object or the new one.
        await rename(temp, path);
        break;
      } catch (err) {
        if (errnoOf(err) !== 'ENOENT' || attempt >= RENAME_ATTEMPTS) throw err;
        knownDirs.delete(dirname(path)); // pruned by a delete: make it again
        knownDirs.delete(tempDir);
      }
    }
    await syncDir(dirname(path), fsync);
  }

  async function pruneEmptyFolders(from: string): Promise<void> {
    for (let dir = from; dir !== root && dir.startsWith(root); dir = dirname(dir)) {
      try {
        await rmdir(dir);
        knownDirs.delete(dir);
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

    async putStream(key: string, body: AsyncIterable<Uint8Array>, opts?: StreamPutOptions): Promise<PutResult> {
      assertObjectKey(key);
      const path = objectFilePath(root, key);
      let written: { temp: string; size: number; sha256: string } | undefined;
      try {
        written = await writeTempStream(body, opts);
        await publish(written.temp, path);
      } catch (err) {
        if (written !== undefined) await unlink(written.temp).catch(() => undefined);
        throw unavailable('put', err);
      }
      return { size: written.size, sha256: written.sha256 };
    },

    async copy(from: string, to: string): Promise<boolean> {
      assertObjectKey(from);
      assertObjectKey(to);
      await mkdir(tempDir, { recursive: true, mode: DIR_MODE }).catch((err: unknown) => {
        throw unavailable('copy', err);
      });
      const temp = join(tempDir, `${process.pid}-${randomUUID()}`);
      try {
        // Object files are never changed in place (a put renames a new file over the name), so a
        // hard link is a true copy; another file system (EXDEV) or no links (EPERM) copies bytes.
        try {
          await link(objectFilePath(root, from), temp);
        } catch (err) {
          if (isAbsent(err)) return false;
          if (errnoOf(err) !== 'EXDEV' && errnoOf(err) !== 'EPERM') throw err;
          await copyFile(objectFilePath(root, from), temp);
        }
        await publish(temp, objectFilePath(root, to));
        return true;
      } catch (err) {
        await unlink(temp).catch(() => undefined);
        throw unavailable('copy', err);
      }
    },

    async getStream(key: string, range?: ByteRange): Promise<ObjectStream | null> {
      assertObjectKey(key);
      const path = objectFilePath(root, key);
      let handle;
      try {
        handle = await open(path, 'r');
      } catch (err) {
        if (isAbsent(err)) return null;
        throw unavailable('get', err);
      }
      try {
        const { header, size } = await readObjectHead(handle);
        const { size: fileSize } = await handle.stat();
        const bodyStart = fileSize - size;
        const start = bodyStart + (range?.start ?? 0);
        const end = bodyStart + (range ? Math.min(range.end, size - 1) : size - 1);
        // The stream owns the open handle (closed when it ends or is destroyed), so a put that
        // renames a new file over the name meanwhile does not change what this reader sees.
        const body = size === 0 || end < start ? emptyBody() : handle.createReadStream({ start, end, highWaterMark: 256 * 1024 });
        if (size === 0 || end < start) await handle.close();
        return { size, ...(header.contentType === undefined ? {} : { contentType: header.contentType }), body };
      } catch (err) {
        await handle.close().catch(() => undefined);
        throw unavailable('get', err);
      }
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
