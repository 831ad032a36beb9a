import { OBJECT_STORE_ERROR, ObjectStoreError } from './object-store-error.js';

// S3 caps keys at 1024 bytes of UTF-8; the directory store inherits the same cap so that a key
// accepted by one driver is accepted by the other.
export const MAX_OBJECT_KEY_BYTES = 1024;

// C0 controls, DEL and C1 controls. NUL is among them. They are refused because they break
// file names, log lines and the XML S3 uses for listings.
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;

// A lone surrogate has no UTF-8 form: it would be sent as U+FFFD, so two different keys would
// name one object.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Throws ObjectStoreError(invalid_object_key) unless `key` is a portable object key: non-empty,
 * at most 1024 UTF-8 bytes, made of `/`-separated segments that are neither empty (so no
 * leading, trailing or doubled `/`) nor `.` or `..`, with no backslash and no control character.
 * Both drivers call this first, so a key means the same object on S3 and on disk, and no key
 * can name a path outside the directory store's root. Messages never echo the key: keys can
 * carry identifiers that do not belong in a 400 body.
 */
export function assertObjectKey(key: string): void {
  const refuse = (why: string): never => {
    throw new ObjectStoreError(OBJECT_STORE_ERROR.INVALID_KEY, `invalid object key: ${why}`);
  };
  if (typeof key !== 'string' || key.length === 0) refuse('empty');
  if (Buffer.byteLength(key, 'utf8') > MAX_OBJECT_KEY_BYTES) refuse(`longer than ${MAX_OBJECT_KEY_BYTES} bytes`);
  if (LONE_SURROGATE.test(key)) refuse('contains a lone surrogate');
  if (CONTROL_CHARS.test(key)) refuse('contains a control character');
  if (key.includes('\\')) refuse('contains a backslash');
  if (key.startsWith('/')) refuse('starts with /');
  for (const segment of key.split('/')) {
    if (segment === '') refuse('has an empty segment');
    if (segment === '.' || segment === '..') refuse('has a . or .. segment');
  }
}
