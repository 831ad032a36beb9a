// The attempt as a Piscina task (DESIGN.md "Attempt"). The host passes the start message and the
// number of the attempt's channel on this thread's link to the host (attempt-link.ts); the task
// posts AttemptMessages on that channel and resolves only after its terminal `done`. It never
// opens PostgreSQL, Redis or the object store: it imports the model adapters and nothing of
// runtime/index.ts (which would pull pg and ioredis into every worker thread).
import { AgentLoop } from './agent-loop.js';
import { openLinkedPort } from './attempt-link.js';
import { AttemptPort } from './attempt-port.js';
import type { AttemptStart, DoneMessage } from './attempt-protocol.js';
import { prepareAttempt } from './attempt-setup.js';

export interface AttemptTask {
  start: AttemptStart;
  /** The attempt's channel on this thread's link (the host's AttemptPool numbers them). */
  channel: number;
}

export default async function runAttempt({ start: sent, channel }: AttemptTask): Promise<void> {
  const start = withHistory(sent);
  const attemptPort = new AttemptPort(openLinkedPort(channel));
  try {
    attemptPort.post(await finish(start, attemptPort));
  } finally {
    attemptPort.release();
  }
}

/** The start with `history` parsed here from history_json when the host sent the text. */
function withHistory(start: AttemptStart): AttemptStart {
  if (start.history_json === undefined) return start;
  const { history_json: text, ...rest } = start;
  return { ...rest, history: JSON.parse(text) as AttemptStart['history'] };
}

async function finish(start: AttemptStart, port: AttemptPort): Promise<DoneMessage> {
  const usage = { requests: 0, input_tokens: 0, output_tokens: 0 };
  try {
    const prepared = await prepareAttempt(start, port, port.signal);
    if (!prepared.ok) return { type: 'done', outcome: port.signal.aborted ? 'cancelled' : 'failed', failure: prepared.failure, usage };
    try {
      return await new AgentLoop(start, port, prepared.setup).run();
    } finally {
      // Before `done`: the host closes the port once it reads it, and the sessions must end first.
      await prepared.setup.close().catch(() => undefined);
    }
  } catch (err) {
    // A bug in the loop: the run fails with `internal` instead of leaving the host waiting
    // for a `done` that never comes. Only the message crosses over, never a stack.
    const detail = err instanceof Error ? err.message : String(err);
    return { type: 'done', outcome: 'failed', failure: { code: 'internal', message: `the attempt failed unexpectedly: ${detail}` }, usage };
  }
}
