import { join } from 'node:path';
import { OBJECT_STORE_ERROR, ObjectStoreError } from './object-store-error.js';

// How keys map onto files under the root of the directory store.
//
// S3 lets `a` and `a/b` both be objects; a file system cannot have a file and a folder both
// named `a`. So every key segment is escaped to a name that never contains `~`, folders take
// that name as is, and object files add the suffix `~obj`: no folder name can equal an object
// file name, whatever the keys. The escaping percent-encodes every UTF-8 byte outside
// [A-Za-z0-9._-] (so `~` and `%` are always escaped) and a leading `.`, which keeps names
// starting with `.` free for the store's own entries (`.tmp`) and hides nothing from `ls`.
//
// Case-insensitive file systems (macOS default) would fold `A` and `a` together; the
// directory store is meant for Linux hosts and tests, S3 for everything else.

export const OBJECT_FILE_SUFFIX = '~obj';
export const TEMP_DIR_NAME = '.tmp';

// NAME_MAX is 255 bytes on every Linux file system we care about.
const NAME_MAX = 255;

const PLAIN_BYTE = /^[A-Za-z0-9._-]$/;

export function encodeSegment(segment: string): string {
  let out = '';
  const bytes = Buffer.from(segment, 'utf8');
  for (let i = 0; i < bytes.length; i += 1) {
    const byte = bytes[i] as number;
    const ch = String.fromCharCode(byte);
    const plain = byte < 0x80 && PLAIN_BYTE.test(ch) && !(i === 0 && ch === '.');
    out += plain ? ch : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** The segment a file name encodes, or null for names this store did not write. */
export function decodeSegment(name: string): string | null {
  let segment: string;
  try {
    segment = decodeURIComponent(name);
  } catch {
    return null;
  }
  // Only the canonical spelling of a segment a key can have counts, so one key has exactly
  // one file name and no foreign name can smuggle `/` or `..` into a listed key.
  if (segment === '' || segment === '.' || segment === '..' || segment.includes('/')) return null;
  return encodeSegment(segment) === name ? segment : null;
}

export type DirectoryEntry = { kind: 'object'; segment: string } | { kind: 'folder'; segment: string };

/** What a directory entry is to the store; null for internal and foreign entries. */
export function classifyEntry(name: string, isDirectory: boolean, isFile: boolean): DirectoryEntry | null {
  if (name.startsWith('.')) return null;
  if (isFile && name.endsWith(OBJECT_FILE_SUFFIX)) {
    const segment = decodeSegment(name.slice(0, -OBJECT_FILE_SUFFIX.length));
    return segment === null ? null : { kind: 'object', segment };
  }
  if (isDirectory) {
    const segment = decodeSegment(name);
    return segment === null ? null : { kind: 'folder', segment };
  }
  return null;
}

/** The object file of an already validated key; refuses segments too long for a file name. */
export function objectFilePath(root: string, key: string): string {
  const segments = key.split('/');
  const last = segments.pop() as string;
  const names = segments.map(encodeSegment);
  names.push(encodeSegment(last) + OBJECT_FILE_SUFFIX);
  for (const name of names) {
    if (Buffer.byteLength(name) > NAME_MAX) {
      throw new ObjectStoreError(
        OBJECT_STORE_ERROR.INVALID_KEY,
        `invalid object key: a segment is too long for the directory store (${NAME_MAX} bytes once escaped)`,
      );
    }
  }
  return join(root, ...names);
}
