// The contract both drivers implement. Keys are validated by object-key.ts before any I/O.

export interface PutOptions {
  contentType?: string;
}

export interface PutResult {
  /** Body length in bytes. */
  size: number;
  /** Lowercase hex SHA-256 of the body, computed locally from the bytes that were sent. */
  sha256: string;
}

export interface HeadResult {
  size: number;
  /** The content type given at put; S3 may report its own default when none was given. */
  contentType?: string;
}

export interface ListOptions {
  /** At most this many keys (1..1000, default 1000). */
  limit?: number;
  /** Exclusive lower bound: only keys strictly after this one (pass the previous `next`). */
  after?: string;
}

export interface ListResult {
  /** Keys in ascending UTF-8 byte order (the order S3 uses). */
  keys: string[];
  /** Present when more keys may follow; pass it as `after` to continue. It is the last key. */
  next?: string;
}

export interface ObjectStore {
  put(key: string, body: Uint8Array, opts?: PutOptions): Promise<PutResult>;
  /** The whole body, or null when the key is absent. */
  get(key: string): Promise<Uint8Array | null>;
  head(key: string): Promise<HeadResult | null>;
  /** Idempotent: deleting an absent key succeeds. */
  delete(key: string): Promise<void>;
  list(prefix: string, opts?: ListOptions): Promise<ListResult>;
  /** Cheap health probe; throws ObjectStoreError(object_store_unavailable) when unreachable. */
  check(): Promise<void>;
  close(): Promise<void>;
}
