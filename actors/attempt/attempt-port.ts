// The attempt's end of the MessagePort: posts AttemptMessages (checkpoint bytes transferred,
// not copied) and turns HostMessages into state the loop polls: an AbortSignal for cancel, a
// drain flag, and a queue of steer entries.
import type { MessagePort } from 'node:worker_threads';
import { Value } from '@sinclair/typebox/value';
import { HostMessage, type AttemptMessage, type SteerEntry } from './attempt-protocol.js';

export class AttemptPort {
  private readonly cancel = new AbortController();
  private drainRequested = false;
  private steers: SteerEntry[] = [];
  private finished = false;
  private readonly onMessage = (message: unknown): void => this.receive(message);

  constructor(private readonly port: MessagePort) {
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
    if (message.type === 'checkpoint') {
      // The state bytes own their ArrayBuffer (agent-state.ts copies them), so transferring
      // moves them to the host without a copy and without detaching anything shared.
      this.port.postMessage(message, [message.state.buffer as ArrayBuffer]);
    } else {
      this.port.postMessage(message);
    }
    // The terminal message ends the attempt: nothing may follow it (the host finishes the
    // attempt on `done`, not on the task promise).
    if (message.type === 'done') this.finished = true;
  }

  /** Stops listening; the host owns the port and closes it after reading `done`. */
  release(): void {
    this.port.off('message', this.onMessage);
    this.port.unref();
  }

  private receive(raw: unknown): void {
    if (!Value.Check(HostMessage, raw)) return; // a malformed host message is a host bug; ignoring it keeps the run going
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
      default: {
        const unreachable: never = message;
        throw new Error(`unknown host message ${JSON.stringify(unreachable)}`);
      }
    }
  }
}
