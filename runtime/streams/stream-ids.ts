/** Redis stream ids `<ms>-<seq>`: totally ordered per stream, compared numerically. */
export const STREAM_ID_PATTERN = /^\d{1,20}-\d{1,20}$/;

/** The id before every record: reading after it returns the whole retained stream. */
export const STREAM_START_ID = '0-0';

export function isStreamId(value: string): boolean {
  return STREAM_ID_PATTERN.test(value);
}

export function compareStreamIds(a: string, b: string): number {
  const dashA = a.indexOf('-');
  const dashB = b.indexOf('-');
  // Both parts are 64-bit in Redis, beyond what a JS number holds exactly: compare them as
  // decimal strings (by length, then lexically).
  const msA = a.slice(0, dashA);
  const msB = b.slice(0, dashB);
  if (msA !== msB) return compareDecimal(msA, msB);
  return compareDecimal(a.slice(dashA + 1), b.slice(dashB + 1));
}

function compareDecimal(a: string, b: string): number {
  const x = a.replace(/^0+(?=\d)/, '');
  const y = b.replace(/^0+(?=\d)/, '');
  if (x.length !== y.length) return x.length - y.length;
  return x < y ? -1 : x > y ? 1 : 0;
}
