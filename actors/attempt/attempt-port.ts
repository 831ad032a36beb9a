// The attempt's end of the MessagePort: posts AttemptMessages (checkpoint bytes transferred,
// not copied) and turns HostMessages into state the loop polls: an AbortSignal for cancel, a
// drain flag, and a queue of steer entries. It also carries host requests: the attempt asks,
// the host answers on the same port (request ids are unique per attempt, so an answer always
// finds its request).
// Messages are posted per event-loop turn: what the loop posts in one turn goes to the host as
// one post (a `batch` when there are several, attempt-protocol.ts AttemptPost) when the turn
// ends (setImmediate), or at once when waiting would cost latency: the first delta of a turn
// (the first token is never held), a host request (the attempt waits for its answer) and the
// terminal `done` (nothing may follow it; the task resolves right after). Later deltas of the
// same item in a turn — a network read that carried many SSE events — are concatenated into
// one message. Each post is a structured clone and a cross-thread wake-up of the host; a run
// that posted 8 messages posts 2 or 3.
import { checkSchema } from '../../runtime/providers/model-adapters/index.js';
import type { AttemptPortLike } from './attempt-link.js';
import { HostMessage, type AttemptMessage, type AttemptPost, type SteerEntry } from './attempt-protocol.js';

type DeltaMessage = Extract<AttemptMessage, { type: 'item.delta' }>;

/** A host request that failed: `code` is the host's (lease_lost, not_found, …) or `cancelled`. */
export class HostRequestError extends Error {
  override readonly name = 'HostRequestError';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** What server tools use to reach the host (TOOLS.md: anything touching the service's own state). */
export interface HostPort {
  request(op: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<unknown>;
}

interface OpenRequest {
  resolve: (value: unknown) => void;
  reject: (error: HostRequestError) => void;
}

export class AttemptPort implements HostPort {
  private readonly cancel = new AbortController();
  private nextRequestId = 1;
  private readonly requests = new Map<number, OpenRequest>();
  private drainRequested = false;
  private steers: SteerEntry[] = [];
  private finished = false;
  /** Messages posted in this event-loop turn and not yet sent, in order. */
  private queued: AttemptMessage[] = [];
  /** Checkpoint bytes among `queued`, moved (not copied) with the post that carries them. */
  private transfer: ArrayBuffer[] = [];
  /** The last delta of this turn, still growing (one item's deltas, concatenated); null when none. */
  private held: DeltaMessage | null = null;
  /** Set once this turn has sent a delta: its later deltas wait for the turn's end. */
  private deltaSent = false;
  /** The turn's end, scheduled while anything waits to be sent or a delta was sent. */
  private turnEnd: NodeJS.Immediate | null = null;
  private readonly endTurn = (): void => {
    this.turnEnd = null;
    this.deltaSent = false;
    this.flush();
  };
  private readonly onMessage = (message: unknown): void => this.receive(message);

  constructor(private readonly port: AttemptPortLike) {
    port.on('message', this.onMessage);
  }

  /** Aborted when the host cancels the run: aborts the model stream, backoff sleeps and tools. */
  get signal(): AbortSignal {
    return this.cancel.signal;
  }

  get draining(): boolean {
    return this.drainRequested;
  }

  /** Steer entries received since the last call, in arrival order. */
  takeSteers(): SteerEntry[] {
    const taken = this.steers;
    this.steers = [];
    return taken;
  }

  post(message: AttemptMessage): void {
    if (this.finished) throw new Error(`attempt already finished; cannot post ${message.type}`);
    if (message.type === 'item.delta') return this.postDelta(message);
    // A held delta goes first: the host sees every message in the order the loop posted it.
    this.releaseHeld();
    this.queued.push(message);
    // The state bytes own their ArrayBuffer (agent-state.ts copies them), so transferring
    // moves them to the host without a copy and without detaching anything shared.
    if (message.type === 'checkpoint') this.transfer.push(message.state.buffer as ArrayBuffer);
    if (message.type === 'done' || message.type === 'host.request') this.flush();
    else this.scheduleTurnEnd();
    // The terminal message ends the attempt: nothing may follow it (the host finishes the
    // attempt on `done`, not on the task promise), and it has been sent above, before the
    // task can resolve.
    if (message.type === 'done') this.finished = true;
  }

  /**
   * Asks the host and waits for its answer. Rejects with `cancelled` when the run is
   * cancelled (or `signal` aborts) first: the host may still carry the request out, so what
   * a request does must be safe to repeat (TOOLS.md: side effects are at least once).
   */
  request(op: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<unknown> {
    const id = this.nextRequestId++;
    const signals = signal ? [this.cancel.signal, signal] : [this.cancel.signal];
    const aborted = AbortSignal.any(signals);
    if (aborted.aborted) return Promise.reject(new HostRequestError('cancelled', 'the run was cancelled'));
    return new Promise<unknown>((resolve, reject) => {
      const onAbort = (): void => {
        this.requests.delete(id);
        reject(new HostRequestError('cancelled', 'the request was cancelled'));
      };
      aborted.addEventListener('abort', onAbort, { once: true });
      this.requests.set(id, {
        resolve: (value) => {
          aborted.removeEventListener('abort', onAbort);
          resolve(value);
        },
        reject: (error) => {
          aborted.removeEventListener('abort', onAbort);
          reject(error);
        },
      });
      this.post({ type: 'host.request', id, op, args });
    });
  }

  private postDelta(message: DeltaMessage): void {
    if (!this.deltaSent) {
      // The first delta of this turn: sent now with whatever the turn queued before it.
      this.deltaSent = true;
      this.queued.push(message);
      this.flush();
      this.scheduleTurnEnd(); // later deltas of this turn wait for its end
      return;
    }
    const held = this.held;
    if (held !== null && held.ordinal === message.ordinal) {
      this.held = { type: 'item.delta', ordinal: held.ordinal, delta: concatDeltas(held.delta, message.delta) };
      return;
    }
    this.releaseHeld();
    this.held = message;
  }

  /** Moves the held delta to the queue (it is complete once anything else is posted). */
  private releaseHeld(): void {
    if (this.held === null) return;
    this.queued.push(this.held);
    this.held = null;
  }

  private scheduleTurnEnd(): void {
    this.turnEnd ??= setImmediate(this.endTurn);
  }

  /** Sends everything queued and held, as one post. */
  private flush(): void {
    this.releaseHeld();
    const queued = this.queued;
    if (queued.length === 0) return;
    const transfer = this.transfer;
    this.queued = [];
    this.transfer = [];
    const post: AttemptPost = queued.length === 1 ? queued[0]! : { type: 'batch', messages: queued };
    this.port.postMessage(post, transfer);
  }

  /** Stops listening; the host owns the port and closes it after reading `done`. */
  release(): void {
    this.flush(); // nothing is queued after `done`; this covers a task that ended without one
    if (this.turnEnd !== null) clearImmediate(this.turnEnd);
    this.turnEnd = null;
    this.port.off('message', this.onMessage);
    this.port.unref();
  }

  private receive(raw: unknown): void {
    if (!checkSchema(HostMessage, raw)) return; // a malformed host message is a host bug; ignoring it keeps the run going
    const message: HostMessage = raw;
    switch (message.type) {
      case 'cancel':
        this.cancel.abort();
        return;
      case 'drain':
        this.drainRequested = true;
        return;
      case 'steer':
        this.steers.push(...message.entries);
        return;
      case 'host.response': {
        const open = this.requests.get(message.id);
        if (!open) return; // cancelled meanwhile: the late answer has nobody to go to
        this.requests.delete(message.id);
        if (message.ok) open.resolve(message.result ?? null);
        else open.reject(new HostRequestError(message.error?.code ?? 'internal', message.error?.message ?? 'the host request failed'));
        return;
      }
      default: {
        const unreachable: never = message;
        throw new Error(`unknown host message ${JSON.stringify(unreachable)}`);
      }
    }
  }
}

/** `a` then `b`, field by field: the concatenation of the deltas' text and arguments. */
function concatDeltas(a: DeltaMessage['delta'], b: DeltaMessage['delta']): DeltaMessage['delta'] {
  const out: DeltaMessage['delta'] = {};
  if (a.text !== undefined || b.text !== undefined) out.text = (a.text ?? '') + (b.text ?? '');
  if (a.arguments !== undefined || b.arguments !== undefined) out.arguments = (a.arguments ?? '') + (b.arguments ?? '');
  return out;
}
