// The host's side of the attempt threads: the Piscina pool, and one link per thread over which
// every attempt of that thread talks to its host under a channel number (the thread's side is
// attempt-link.ts). Each attempt gets a HostChannel, which its host uses as it used the
// attempt's own MessagePort before (on/off 'message', postMessage, close).
//
// Ordering: a link is one MessagePort, so an attempt's posts reach the host in the order it
// made them, and the host's messages for it reach the thread in the order they were sent; the
// channel number (unique in this process, never reused) keeps attempts apart — a discarded
// speculation still running and the attempt started after it for the same attempt id have
// different channels, so nothing of the one reaches the other.
import { fileURLToPath } from 'node:url';
import type { MessagePort } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { ATTEMPT_LINK, type AttemptPost, type AttemptStart, type HostMessage, type LinkMessage } from './attempt-protocol.js';

/** Absolute path of the compiled task file (dist/actors/attempt/attempt.task.js), for `new Piscina({filename})`. */
export const ATTEMPT_TASK_FILE = fileURLToPath(new URL('./attempt.task.js', import.meta.url));

/** Options of the pool (its shape and thread flags, worker-host.ts). */
export type AttemptPoolOptions = Omit<ConstructorParameters<typeof Piscina>[0] & object, 'filename'>;

/**
 * One attempt's channel, host side. Messages for the attempt sent before its first post are
 * held: until then the host does not know which thread runs it (Piscina chooses), and the
 * attempt posts in its first turn (or says hello one turn later, LinkedPort). Then they go,
 * in order, ahead of anything sent later.
 */
export class HostChannel {
  private link: MessagePort | null = null;
  private held: HostMessage[] = [];
  private listeners: Array<(post: AttemptPost) => void> = [];
  private closed = false;

  constructor(
    readonly number: number,
    private readonly onClose: (channel: HostChannel) => void,
  ) {}

  // The listener list is replaced, never changed in place: a post being handed out keeps the
  // list it started with (a listener added or removed meanwhile, as SpeculativeAttempt.adopt
  // does, applies to the next post) without a copy per post.
  on(_event: 'message', listener: (post: AttemptPost) => void): this {
    this.listeners = [...this.listeners, listener];
    return this;
  }

  off(_event: 'message', listener: (post: AttemptPost) => void): this {
    this.listeners = this.listeners.filter((l) => l !== listener);
    return this;
  }

  postMessage(message: HostMessage): void {
    if (this.closed) return;
    if (this.link) return this.send(this.link, message);
    this.held.push(message);
  }

  /** Stops the channel: later posts of the attempt are dropped, later messages to it not sent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.held = [];
    this.listeners = [];
    this.onClose(this);
  }

  /** A link message of this channel arrived on `link` (attempt-pool's dispatch). */
  received(link: MessagePort, message: unknown): void {
    if (this.closed) return;
    if (!this.link) {
      this.link = link;
      const held = this.held;
      this.held = [];
      for (const m of held) this.send(link, m);
    }
    if (message === null) return; // the hello: binds, carries nothing
    for (const listener of this.listeners) listener(message as AttemptPost);
  }

  private send(link: MessagePort, message: HostMessage): void {
    const wrapped: LinkMessage = { channel: this.number, message };
    link.postMessage(wrapped);
  }
}

/** Channel numbers are unique in the process, so two pools (tests) never mix theirs. */
let lastChannel = 0;

/** The attempt pool: Piscina's threads, their links, and the open channels. */
export class AttemptPool {
  private readonly pool: Piscina;
  private readonly channels = new Map<number, HostChannel>();
  private readonly links = new Set<MessagePort>();
  private readonly forget = (channel: HostChannel): void => void this.channels.delete(channel.number);

  constructor(options: AttemptPoolOptions) {
    this.pool = new Piscina({ ...options, filename: ATTEMPT_TASK_FILE });
    // A thread's link comes over its parentPort, which Piscina hands to 'message' listeners
    // (every message but its own ready signal). A replacement thread (after a crash) sends its own.
    this.pool.on('message', (message: { type?: unknown; port?: unknown }) => {
      if (message?.type === ATTEMPT_LINK && message.port) this.addLink(message.port as MessagePort);
    });
  }

  /** Posts the attempt to a thread; `task` rejects when the thread died before the attempt's end. */
  run(start: AttemptStart): { channel: HostChannel; task: Promise<unknown> } {
    const channel = new HostChannel(++lastChannel, this.forget);
    this.channels.set(channel.number, channel);
    const task = this.pool.run({ start, channel: channel.number });
    return { channel, task };
  }

  destroy(): Promise<void> {
    for (const link of this.links) link.close();
    this.links.clear();
    return this.pool.destroy();
  }

  private addLink(link: MessagePort): void {
    this.links.add(link);
    link.on('message', (wrapped: LinkMessage) => this.channels.get(wrapped.channel)?.received(link, wrapped.message));
    link.on('close', () => this.links.delete(link));
    // Open channels keep the process alive through their tasks, not through the link.
    link.unref();
  }
}
