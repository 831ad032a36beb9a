// What every environment type implements (TOOLS.md "Environments"): the vendor side of an
// instance's life (create, start, stop, destroy, renew) and what the environment tools do in
// it (run a command, read, write and list files). One client per type, each speaking its
// vendor's documented API; the lifecycle and its fencing live in runtime/environments, which
// calls these only outside transactions.
import type { ProviderCredential } from '../provider-credential.js';

/** An instance as the client needs it to reach it again. */
export interface EnvironmentInstance {
  /** Our environment id (env_…): also the vendor-side name where the vendor takes one. */
  id: string;
  vendor_id: string | null;
  vendor_state: Record<string, unknown>;
  /** The template's config (the type's environment_schema). */
  config: Record<string, unknown>;
  working_directory: string;
}

/** The provider an instance lives at: its stored config and decrypted credential. */
export interface EnvironmentProviderAccess {
  type: string;
  config: Record<string, unknown>;
  credential: ProviderCredential | null;
}

/** Deployment settings the clients read (not per provider). */
export interface EnvironmentHostSettings {
  /** Parent folder of local environment directories (environments.local_directory). */
  localDirectory: string;
  /** The bubblewrap executable (environments.local_bwrap). */
  bwrapPath: string;
  /** Host paths a local sandbox must never see even where a read-only system folder holds them. */
  hiddenPaths: readonly string[];
  /** Plain-http origins the endpoint policy allows (providers.allowed_http_origins). */
  allowedHttpOrigins: readonly string[];
  /** Per-process memo of host checks (whether bubblewrap works here), filled by the clients. */
  readonly checks: Map<string, Promise<string | null>>;
}

export interface CreatedInstance {
  vendor_id: string;
  vendor_state: Record<string, unknown>;
  working_directory: string;
  /** When the vendor ends the instance unless it is renewed (hosted sandboxes). */
  expires_at?: Date;
}

export interface ExecRequest {
  command: string;
  /** Absolute path inside the instance. */
  cwd: string;
  timeout_ms: number;
  /** Bytes kept of stdout and of stderr each (head and tail; the middle is cut). */
  output_limit: number;
}

/** A stream's captured bytes, cut to the limit with a marker where bytes were dropped. */
export interface CapturedOutput {
  text: string;
  bytes: number;
  truncated: boolean;
}

export interface ExecResult {
  /** Null when the command was killed (timeout) or the vendor reported none. */
  exit_code: number | null;
  stdout: CapturedOutput;
  stderr: CapturedOutput;
  timed_out: boolean;
}

export interface FileEntry {
  path: string;
  type: 'file' | 'directory' | 'symlink' | 'other';
  size: number;
}

export interface ReadFileResult {
  content: Buffer;
  /** Size of the whole file (content may be cut to the limit). */
  size: number;
}

export interface EnvironmentClient {
  /** Why this type cannot run on this host (local without bubblewrap); null when it can. */
  unavailableReason(): Promise<string | null>;
  /** Where commands and relative paths start when the template does not say. */
  defaultWorkingDirectory(config: Record<string, unknown>): string;
  create(instance: EnvironmentInstance, signal: AbortSignal): Promise<CreatedInstance>;
  /** Brings a stopped instance back; returns a new expiry for hosted sandboxes. */
  start(instance: EnvironmentInstance, signal: AbortSignal): Promise<{ expires_at?: Date }>;
  stop(instance: EnvironmentInstance, signal: AbortSignal): Promise<void>;
  /** Destroys for good; an instance the vendor no longer knows counts as destroyed. */
  destroy(instance: EnvironmentInstance, signal: AbortSignal): Promise<void>;
  /** Extends a hosted sandbox's lifetime by `seconds` from now; returns the new expiry. */
  renew?(instance: EnvironmentInstance, seconds: number, signal: AbortSignal): Promise<Date>;
  exec(instance: EnvironmentInstance, request: ExecRequest, signal: AbortSignal): Promise<ExecResult>;
  readFile(instance: EnvironmentInstance, path: string, maxBytes: number, signal: AbortSignal): Promise<ReadFileResult>;
  writeFile(instance: EnvironmentInstance, path: string, content: Buffer, signal: AbortSignal): Promise<void>;
  /** Entries under `path` (recursively up to `maxEntries`), paths absolute. */
  listFiles(instance: EnvironmentInstance, path: string, recursive: boolean, maxEntries: number, signal: AbortSignal): Promise<FileEntry[]>;
  /**
   * Removes a folder and everything in it; a missing one is no error. Only where commands
   * cannot do it (local: /skills is read-only inside the sandbox); elsewhere the caller runs
   * `rm -rf` through exec.
   */
  removeTree?(instance: EnvironmentInstance, path: string, signal: AbortSignal): Promise<void>;
}

export type EnvironmentClientFactory = (provider: EnvironmentProviderAccess, host: EnvironmentHostSettings) => EnvironmentClient;

// How a vendor failure is classified; runtime/environments turns each into the error the
// API or the model sees.
export const VENDOR_FAILURES = ['unavailable', 'unauthenticated', 'not_found', 'refused', 'timeout', 'protocol'] as const;
export type VendorFailure = (typeof VENDOR_FAILURES)[number];

export class EnvironmentVendorError extends Error {
  override readonly name = 'EnvironmentVendorError';
  constructor(
    readonly failure: VendorFailure,
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/** A file-tool path problem the model should see (outside the instance's reachable tree, not a file, …). */
export class EnvironmentPathError extends Error {
  override readonly name = 'EnvironmentPathError';
}
