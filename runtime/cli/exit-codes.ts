// Exit codes of the operator commands (README, "Operator commands").
export const EXIT = {
  ok: 0,
  /** invalid input or configuration, or the command failed */
  failure: 1,
  /** the database schema is not the build's (run migrate, or upgrade) */
  schemaMismatch: 2,
  /** bootstrap: already initialized, nothing changed */
  alreadyInitialized: 3,
} as const;

/** Thrown by commands to end with a message and an exit code. */
export class CliExit extends Error {
  constructor(
    readonly exitCode: number,
    message: string,
  ) {
    super(message);
    this.name = 'CliExit';
  }
}
