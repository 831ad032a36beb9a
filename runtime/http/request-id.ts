import { randomBytes } from 'node:crypto';

// A client-supplied X-Request-Id is kept when it is short and plain (so callers can correlate
// their own logs); anything else is ignored and replaced by a generated one.
const ACCEPTED = /^[A-Za-z0-9._:-]{8,128}$/;

export function requestIdFrom(header: string | undefined): string {
  if (header !== undefined && ACCEPTED.test(header)) return header;
  return `req_${randomBytes(12).toString('base64url')}`;
}
