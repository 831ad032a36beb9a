// Avatar media types are taken from the bytes (magic numbers), never from the Content-Type
// header: the stored type is then what the image really is, and a non-image cannot be served
// back under an image type.
export const AVATAR_MEDIA_TYPES = ['image/jpeg', 'image/png', 'image/webp', 'image/gif'] as const;
export type AvatarMediaType = (typeof AVATAR_MEDIA_TYPES)[number];
/** Avatars are small pictures; 2 MiB leaves room for a large PNG. */
export const MAX_AVATAR_BYTES = 2 * 1024 * 1024;

const startsWith = (bytes: Uint8Array, signature: number[], offset = 0): boolean =>
  bytes.length >= offset + signature.length && signature.every((b, i) => bytes[offset + i] === b);

const ascii = (text: string): number[] => [...text].map((c) => c.charCodeAt(0));

/** The image type the bytes are, or null when they are none of the accepted ones. */
export function sniffImageType(bytes: Uint8Array): AvatarMediaType | null {
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith(bytes, ascii('GIF87a')) || startsWith(bytes, ascii('GIF89a'))) return 'image/gif';
  if (startsWith(bytes, ascii('RIFF')) && startsWith(bytes, ascii('WEBP'), 8)) return 'image/webp';
  return null;
}
