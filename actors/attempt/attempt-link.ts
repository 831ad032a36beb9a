// The attempt thread's one channel to its host: every attempt of the thread talks to the
// worker host over it, each under the channel number the host gave its task (the host's end is
// actors/worker/attempt-pool.ts). It replaces a MessageChannel per attempt: creating one on the
// host and receiving its transferred port here cost ~70 µs and ~130 µs of the path to the
// first token on an idle machine (bench/RESULTS.md, session 23), and more when the cores are
// busy. The link is made when this module loads on a Piscina thread — before the thread says
// it is ready, so the host has it before it gives the thread a task — and lives as long as
// the thread.
import { MessageChannel, parentPort, type MessagePort } from 'node:worker_threads';
import { ATTEMPT_LINK, type LinkMessage } from './attempt-protocol.js';

/** The port an attempt is given: a MessagePort in unit tests, a LinkedPort on a pool thread. */
export interface AttemptPortLike {
  on(event: 'message', listener: (message: unknown) => void): unknown;
  off(event: 'message', listener: (message: unknown) => void): unknown;
  postMessage(message: unknown, transfer?: readonly ArrayBuffer[]): void;
  unref(): void;
}

class ThreadLink {
  private readonly port: MessagePort;
  /** The listener of each open channel of this thread. */
  private readonly channels = new Map<number, (message: unknown) => void>();

  constructor(parent: MessagePort) {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    // The host sends a channel's messages only after that channel's first post (its binding,
    // see HostChannel), which follows the channel's open here: a message always finds it, or
    // finds it closed (the attempt ended; as a closed per-attempt port would, it is dropped).
    port1.on('message', (link: LinkMessage) => this.channels.get(link.channel)?.(link.message));
    port1.unref(); // referenced while a channel is open (as an attempt's own port was)
    parent.postMessage({ type: ATTEMPT_LINK, port: port2 }, [port2]);
  }

  open(channel: number): LinkedPort {
    if (this.channels.has(channel)) throw new Error(`attempt channel ${channel} is open already on this thread`);
    return new LinkedPort(this, channel);
  }

  listen(channel: number, listener: ((message: unknown) => void) | null): void {
    if (listener) this.channels.set(channel, listener);
    else this.channels.delete(channel);
    if (this.channels.size > 0) this.port.ref();
    else this.port.unref();
  }

  post(channel: number, message: unknown, transfer?: readonly ArrayBuffer[]): void {
    const link: LinkMessage = { channel, message };
    this.port.postMessage(link, transfer as ArrayBuffer[] | undefined);
  }
}

/** One attempt's end of the thread's link: a MessagePort as far as AttemptPort is concerned. */
export class LinkedPort implements AttemptPortLike {
  private listener: ((message: unknown) => void) | null = null;
  private released = false;

  /** Set by the first post: the host knows the channel's thread from it (its binding). */
  private posted = false;

  constructor(
    private readonly link: ThreadLink,
    readonly channel: number,
  ) {
    // The host holds its messages for this attempt (cancel, drain, steer) until the channel's
    // first post tells it which thread runs it. An attempt posts in its first turn as a rule
    // (its input item); one that does not (a long preparation) says hello (message null) one
    // turn later, so a cancel never waits for the attempt's first item.
    setImmediate(() => setImmediate(() => this.posted || this.released || this.postMessage(null)));
  }

  on(_event: 'message', listener: (message: unknown) => void): this {
    if (this.released) return this;
    this.listener = listener;
    this.link.listen(this.channel, listener);
    return this;
  }

  off(_event: 'message', listener: (message: unknown) => void): this {
    if (this.listener !== listener) return this;
    this.listener = null;
    this.link.listen(this.channel, null);
    return this;
  }

  postMessage(message: unknown, transfer?: readonly ArrayBuffer[]): void {
    this.posted = true;
    this.link.post(this.channel, message, transfer);
  }

  /** The attempt is over: the channel closes on this side (later host messages are dropped). */
  unref(): void {
    this.released = true;
    if (this.listener) this.off('message', this.listener);
  }
}

/** This thread's link, made at load on a pool thread; null elsewhere (the main thread of a test). */
const link: ThreadLink | null = parentPort ? new ThreadLink(parentPort) : null;

/** The attempt's port on channel `channel` of this thread's link. */
export function openLinkedPort(channel: number): LinkedPort {
  if (!link) throw new Error('an attempt channel needs the attempt pool thread it runs on');
  return link.open(channel);
}
