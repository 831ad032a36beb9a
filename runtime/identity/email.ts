// A deliberately plain check: one @, a dotted or local domain, no spaces or control characters.
const EMAIL = /^[^\s@\x00-\x1f]{1,64}@[^\s@\x00-\x1f]{1,255}$/;

export function normalizeEmail(email: string): string | null {
  const trimmed = email.trim();
  if (!EMAIL.test(trimmed) || trimmed.length > 320) return null;
  const [local, domain] = trimmed.split('@') as [string, string];
  if (domain.startsWith('.') || domain.endsWith('.') || domain.includes('..')) return null;
  return `${local}@${domain.toLowerCase()}`;
}
