// The one error type of the key ring. Messages name paths, key ids and what is wrong, never
// key material, plaintext or tokens.
export const KEY_RING_ERROR = {
  /** A key ring file or config entry with the wrong shape, a bad key id or a key not 32 bytes. */
  INVALID_KEY_RING: 'invalid_key_ring',
  /** The key ring file cannot be read or written. */
  KEY_RING_IO: 'key_ring_io',
  /** The value is not a token this ring can parse (wrong version or encoding). */
  MALFORMED_SECRET: 'malformed_secret',
  /** The token names a key id the ring does not hold. */
  UNKNOWN_KEY: 'unknown_key',
  /** Authentication failed: the AAD differs from the one used to encrypt, or the token was altered. */
  DECRYPT_FAILED: 'decrypt_failed',
} as const;

export type KeyRingErrorCode = (typeof KEY_RING_ERROR)[keyof typeof KEY_RING_ERROR];

export class KeyRingError extends Error {
  override readonly name = 'KeyRingError';
  readonly code: KeyRingErrorCode;

  constructor(code: KeyRingErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

export function isKeyRingError(err: unknown, code?: KeyRingErrorCode): err is KeyRingError {
  return err instanceof KeyRingError && (code === undefined || err.code === code);
}
