import { gunzipSync } from 'node:zlib';
import { AppError } from '../errors/index.js';
import { SKILL_INSTRUCTIONS_FILE, SKILL_PACKAGE_LIMITS, type SkillPackageFile } from './skill-package.js';

// A reader for POSIX ustar archives (plus the pax 'x' and GNU 'L' long-name records that
// `tar` writes for long paths), optionally gzip-compressed. Only regular files and folders
// are accepted: links and device files could point outside the package when unpacked.

const BLOCK = 512;
// Room for the tar framing around a package at its byte limit (headers, padding, folders).
const MAX_ARCHIVE_BYTES = SKILL_PACKAGE_LIMITS.maxPackageBytes + 4 * 1024 * 1024;

const bad = (message: string): AppError => new AppError('invalid_argument', `package: ${message}`, { details: { field: 'body' } });

const text = (block: Buffer, start: number, length: number): string => {
  const field = block.subarray(start, start + length);
  const end = field.indexOf(0);
  return field.subarray(0, end === -1 ? length : end).toString('utf8');
};

function octal(block: Buffer, start: number, length: number, what: string): number {
  const raw = text(block, start, length).trim();
  if (!/^[0-7]*$/.test(raw)) throw bad(`malformed ${what} in a tar header`);
  return raw === '' ? 0 : parseInt(raw, 8);
}

function verifyChecksum(header: Buffer): void {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : header[i]!;
  if (sum !== octal(header, 148, 8, 'checksum')) throw bad('tar header checksum mismatch (not a tar archive?)');
}

/** `path=` of a pax extended header ("<length> <key>=<value>\n" records). */
function paxPath(data: Buffer): string | undefined {
  let path: string | undefined;
  let offset = 0;
  while (offset < data.length) {
    const space = data.indexOf(0x20, offset);
    const length = space === -1 ? NaN : Number(data.subarray(offset, space).toString('ascii'));
    if (!Number.isInteger(length) || length <= 0 || offset + length > data.length) throw bad('malformed pax header');
    const record = data.subarray(space + 1, offset + length - 1).toString('utf8');
    const eq = record.indexOf('=');
    if (eq > 0 && record.slice(0, eq) === 'path') path = record.slice(eq + 1);
    offset += length;
  }
  return path;
}

function gunzipIfNeeded(bytes: Buffer): Buffer {
  if (bytes.length < 2 || bytes[0] !== 0x1f || bytes[1] !== 0x8b) return bytes;
  try {
    return gunzipSync(bytes, { maxOutputLength: MAX_ARCHIVE_BYTES });
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw new AppError('payload_too_large', `the unpacked archive exceeds ${MAX_ARCHIVE_BYTES} bytes`);
    throw bad('malformed gzip data');
  }
}

const normalize = (path: string): string => path.replace(/^(\.\/)+/, '');

/** The regular files of a tar (or .tar.gz) archive, in archive order. */
export function readTarFiles(archive: Buffer): SkillPackageFile[] {
  const bytes = gunzipIfNeeded(archive);
  const files: SkillPackageFile[] = [];
  let nextPath: string | undefined;
  let offset = 0;
  while (offset + BLOCK <= bytes.length) {
    const header = bytes.subarray(offset, offset + BLOCK);
    if (header.every((b) => b === 0)) break; // end-of-archive marker
    verifyChecksum(header);
    const size = octal(header, 124, 12, 'size');
    const type = String.fromCharCode(header[156]!);
    const dataStart = offset + BLOCK;
    if (dataStart + size > bytes.length) throw bad('truncated tar archive');
    const data = bytes.subarray(dataStart, dataStart + size);
    offset = dataStart + Math.ceil(size / BLOCK) * BLOCK;
    const prefix = text(header, 257, 6).startsWith('ustar') ? text(header, 345, 155) : '';
    const name = nextPath ?? (prefix ? `${prefix}/${text(header, 0, 100)}` : text(header, 0, 100));
    if (type === 'x') nextPath = paxPath(data);
    else if (type === 'L') nextPath = text(data, 0, data.length);
    else if (type === 'g' || type === 'K' || type === '5') nextPath = undefined; // global pax, long link name, folder
    else if (type === '0' || type === '\0' || type === '7') {
      nextPath = undefined;
      files.push({ path: normalize(name), bytes: Buffer.from(data) });
      if (files.length > SKILL_PACKAGE_LIMITS.maxFiles) throw bad(`a package holds at most ${SKILL_PACKAGE_LIMITS.maxFiles} files`);
    } else throw bad(`${JSON.stringify(normalize(name))}: links and special files are not accepted`);
  }
  return stripWrappingFolder(files);
}

/**
 * `tar -czf pkg.tgz my-skill/` wraps everything in one folder: when SKILL.md is not at the root
 * but every file lies in one folder that has it, that folder becomes the root.
 */
function stripWrappingFolder(files: SkillPackageFile[]): SkillPackageFile[] {
  if (files.length === 0 || files.some((f) => f.path === SKILL_INSTRUCTIONS_FILE)) return files;
  const top = files[0]!.path.split('/')[0]!;
  const inside = files.every((f) => f.path.startsWith(`${top}/`));
  if (!inside || !files.some((f) => f.path === `${top}/${SKILL_INSTRUCTIONS_FILE}`)) return files;
  return files.map((f) => ({ path: f.path.slice(top.length + 1), bytes: f.bytes }));
}
