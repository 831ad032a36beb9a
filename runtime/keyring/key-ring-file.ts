import { randomBytes } from 'node:crypto';
import { link, mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { createKeyRing, type KeyRing } from './key-ring.js';
import { KEY_RING_ERROR, KeyRingError } from './key-ring-error.js';
import { addActiveKey, generateKeyRingSpec, type KeyRingSpec } from './key-ring-spec.js';

// The key ring file (`encryption.key_file`, default ./data/keyring.json): the spec as JSON,
// owner-only. Messages name the path and the errno code, never the file's content.

const FILE_MODE = 0o600;
const DIR_MODE = 0o700;

function errnoOf(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

function ioError(path: string, op: string, err: unknown): KeyRingError {
  return new KeyRingError(KEY_RING_ERROR.KEY_RING_IO, `${path}: cannot ${op} key ring file (${errnoOf(err) ?? 'error'})`, { cause: err });
}

/** The parsed file, or null when it does not exist. */
async function readSpec(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return null;
    throw ioError(path, 'read', err);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new KeyRingError(KEY_RING_ERROR.INVALID_KEY_RING, `${path}: not valid JSON`);
  }
}

/** Writes `spec` to a new owner-only temporary file beside `path`, synced to disk. */
async function writeTemp(path: string, spec: KeyRingSpec): Promise<string> {
  await mkdir(dirname(path), { recursive: true, mode: DIR_MODE });
  const temp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await open(temp, 'wx', FILE_MODE);
  let written = false;
  try {
    // The umask may have narrowed the mode further; set exactly 0600.
    await handle.chmod(FILE_MODE);
    await handle.writeFile(`${JSON.stringify(spec, null, 2)}\n`);
    await handle.sync();
    written = true;
  } finally {
    await handle.close();
    if (!written) await unlink(temp).catch(() => undefined);
  }
  return temp;
}

async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } catch {
    // Some file systems cannot fsync a folder; the file itself is synced.
  } finally {
    await handle.close();
  }
}

/**
 * Loads the key ring at `path`, creating it with one fresh key on first use. A file with the
 * wrong shape, a bad key id or a key that is not 32 bytes is refused, never replaced: losing
 * the keys would make every stored secret unreadable.
 */
export async function loadOrCreateKeyRing(path: string): Promise<KeyRing> {
  const existing = await readSpec(path);
  // createKeyRing validates its argument in full; the casts only satisfy the signature.
  if (existing !== null) return createKeyRing(existing as KeyRingSpec, path);
  let temp: string | undefined;
  try {
    temp = await writeTemp(path, generateKeyRingSpec());
    // link(2) is an exclusive create of `path` that publishes an already complete file:
    // when processes race, exactly one link succeeds, the others get EEXIST, and no reader
    // ever sees a half-written file (as it could with open(path, 'wx') + write).
    await link(temp, path);
    await syncDir(dirname(path));
  } catch (err) {
    if (errnoOf(err) !== 'EEXIST') throw ioError(path, 'create', err);
  } finally {
    if (temp !== undefined) await unlink(temp).catch(() => undefined);
  }
  // Read back whichever file won the race, so every racer ends with the same keys.
  const created = await readSpec(path);
  if (created === null) throw new KeyRingError(KEY_RING_ERROR.KEY_RING_IO, `${path}: key ring file vanished after creation`);
  return createKeyRing(created as KeyRingSpec, path);
}

/**
 * Adds a fresh key to the file at `path` and makes it active; older keys stay so their values
 * keep decrypting. The file is replaced atomically (temp + fsync + rename). An operator action:
 * run it once, not concurrently, then restart the processes that share the file, since a
 * process holding the old ring cannot open values encrypted under the new key.
 */
export async function rotateKeyRingFile(path: string): Promise<KeyRing> {
  const current = await readSpec(path);
  if (current === null) throw new KeyRingError(KEY_RING_ERROR.KEY_RING_IO, `${path}: no key ring file to rotate`);
  // Validates the current file before anything is written.
  createKeyRing(current as KeyRingSpec, path);
  const next = addActiveKey(current as KeyRingSpec);
  let temp: string | undefined;
  try {
    temp = await writeTemp(path, next);
    await rename(temp, path);
    temp = undefined;
    await syncDir(dirname(path));
  } catch (err) {
    throw ioError(path, 'rotate', err);
  } finally {
    if (temp !== undefined) await unlink(temp).catch(() => undefined);
  }
  return createKeyRing(next, path);
}
