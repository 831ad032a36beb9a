import { AppError } from '../../runtime/index.js';

export function formatEtag(id: string, version: number): string {
  return `"${id}:${version}"`;
}

/** Parses If-Match: a single strong or weak ETag (quotes optional). */
function parseIfMatch(header: string): string[] {
  return header.split(',').map((part) => part.trim().replace(/^W\//, '').replace(/^"(.*)"$/, '$1')).filter(Boolean);
}

/**
 * The precondition check (after the resource was loaded within the workspace, so a missing
 * resource has already answered 404): no If-Match → 428; one that names another id or
 * version → 412.
 */
export function checkIfMatch(header: string | undefined, current: { id: string; version: number }): void {
  if (header === undefined || header.trim() === '') {
    throw new AppError('precondition_required', `If-Match is required: send the ETag of the current view (${formatEtag(current.id, current.version)})`);
  }
  const wanted = `${current.id}:${current.version}`;
  if (!parseIfMatch(header).includes(wanted)) {
    throw new AppError('precondition_failed', 'If-Match does not match the current version of the resource', { details: { current_etag: formatEtag(current.id, current.version) } });
  }
}
