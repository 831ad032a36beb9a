// Test helper: runs the real attempt task through the real attempt pool (Piscina threads and
// their links to the host) and collects its channel's messages until `done`, with assertions
// on the item/checkpoint protocol.
import { unpack } from 'msgpackr';
import * as assert from 'uvu/assert';
import { startModelServer, type ModelServer, type ModelServerOptions } from '../../../bench/model-server.js';
import { AttemptPool, attemptThreadExecArgv, forEachAttemptMessage, type AttemptMessage, type AttemptPost, type AttemptStart, type DoneMessage, type HostMessage } from '../../../actors/attempt/index.js';

export type Checkpoint = Extract<AttemptMessage, { type: 'checkpoint' }>;
export type ItemMessage = Extract<AttemptMessage, { type: 'item.started' | 'item.delta' | 'item.completed' }>;
export type CompletedItem = Extract<AttemptMessage, { type: 'item.completed' }>;

/** Local model servers a suite starts as its tests need them, closed together at its end. */
export function modelServers(): { start(options?: ModelServerOptions): Promise<ModelServer>; closeAll(): Promise<void> } {
  const started: ModelServer[] = [];
  return {
    async start(options) {
      const server = await startModelServer(options);
      started.push(server);
      return server;
    },
    async closeAll() {
      await Promise.all(started.splice(0).map((s) => s.close()));
    },
  };
}

export function attemptPool(): AttemptPool {
  return new AttemptPool({ maxThreads: 1, concurrentTasksPerWorker: 4, execArgv: attemptThreadExecArgv() });
}

export interface AttemptRun {
  /** Every message received so far, in arrival order. */
  messages: AttemptMessage[];
  done: Promise<DoneMessage>;
  send(message: HostMessage): void;
  /** The first message (already received or still to come) that matches. */
  waitFor(match: (m: AttemptMessage) => boolean): Promise<AttemptMessage>;
}

/** Answers the attempt's host requests in tests, as the worker host's operations would. */
export type HostHandler = (op: string, args: Record<string, unknown>) => Promise<unknown>;

const NO_HOST: HostHandler = async (op) => {
  throw Object.assign(new Error(`no host operation ${op} in this test`), { code: 'unknown_operation' });
};

/**
 * model.resolve (asked before every model request after the first, and before reviews) as a
 * worker host answers it while nothing changed: the start's models.
 */
export const unchangedModels =
  (start: AttemptStart): HostHandler =>
  async (_op, args) => {
    if (args['role'] === 'reviewer' && start.reviewer_model !== undefined) {
      if (start.reviewer_model === null) throw Object.assign(new Error(start.reviewer_model_error?.message ?? 'not resolved'), { code: start.reviewer_model_error?.code ?? 'not_found' });
      return start.reviewer_model;
    }
    return start.model;
  };

/** `host` answers the attempt's host requests except model.resolve, which `models` answers. */
export function startAttempt(pool: AttemptPool, start: AttemptStart, host: HostHandler = NO_HOST, models: HostHandler = unchangedModels(start)): AttemptRun {
  const { channel: port1, task } = pool.run(start);
  const messages: AttemptMessage[] = [];
  const watchers: Array<{ match: (m: AttemptMessage) => boolean; resolve: (m: AttemptMessage) => void }> = [];
  let settle!: { resolve: (d: DoneMessage) => void; reject: (e: unknown) => void };
  const done = new Promise<DoneMessage>((resolve, reject) => (settle = { resolve, reject }));
  port1.on('message', (post: AttemptPost) => forEachAttemptMessage(post, onMessage));
  const onMessage = (message: AttemptMessage): void => {
    messages.push(message);
    if (message.type === 'host.request') {
      (message.op === 'model.resolve' ? models : host)(message.op, message.args).then(
        (result) => port1.postMessage({ type: 'host.response', id: message.id, ok: true, result }),
        (err: { code?: string; message?: string }) => port1.postMessage({ type: 'host.response', id: message.id, ok: false, error: { code: err.code ?? 'internal', message: err.message ?? 'failed' } }),
      );
    }
    for (const w of watchers.filter((w) => w.match(message))) {
      watchers.splice(watchers.indexOf(w), 1);
      w.resolve(message);
    }
    if (message.type === 'done') {
      port1.close();
      settle.resolve(message);
    }
  };
  // The attempt ends on its `done` message; the task promise only matters when it rejects.
  task.catch((err: unknown) => settle.reject(err));
  return {
    messages,
    done,
    send: (message) => port1.postMessage(message),
    waitFor: (match) => {
      const seen = messages.find(match);
      return seen ? Promise.resolve(seen) : new Promise((resolve) => watchers.push({ match, resolve }));
    },
  };
}

export function makeStart(server: ModelServer, patch: Partial<AttemptStart> = {}): AttemptStart {
  return {
    type: 'start',
    run: {
      id: 'run_1',
      workspace_id: 'ws_1',
      thread_id: 'thr_1',
      attempt_id: 'att_1',
      attempt_number: 1,
      input: { content: [{ type: 'text', text: 'Hello' }] },
      options: {},
    },
    config: { instructions: 'Be brief.' },
    model: { api: 'openai-chat', base_url: server.url, model: 'mock-model', settings: {} },
    history: [],
    checkpoint: null,
    checkpoint_seq: 0,
    next_ordinal: 1,
    resume: null,
    limits: { max_requests: null, model_timeout_ms: 10_000 },
    context: { context_window_tokens: 32_768, compact_threshold: 0.8, proactive_context_management_threshold: 0.6 },
    ...patch,
  };
}

/** A start that continues from a checkpoint message of an earlier attempt. */
export function continueFrom(start: AttemptStart, checkpoint: Checkpoint, patch: Partial<AttemptStart> = {}): AttemptStart {
  return { ...start, checkpoint: checkpoint.state, checkpoint_seq: checkpoint.seq, next_ordinal: checkpoint.next_ordinal, ...patch };
}

export function checkpoints(messages: AttemptMessage[]): Checkpoint[] {
  return messages.filter((m): m is Checkpoint => m.type === 'checkpoint');
}

export function completedItems(messages: AttemptMessage[]): CompletedItem[] {
  return messages.filter((m): m is CompletedItem => m.type === 'item.completed');
}

export function itemsOfKind(messages: AttemptMessage[], kind: string): CompletedItem[] {
  return completedItems(messages).filter((m) => m.item.kind === kind);
}

// any: the decoded checkpoint state is read field by field in assertions
export function decodeState(checkpoint: Checkpoint): any {
  return unpack(checkpoint.state);
}

/**
 * The protocol every attempt keeps: ordinals gap-free from `firstOrdinal`; per item started,
 * then deltas, then completed, once; seq increasing by one from `firstSeq`; a checkpoint only
 * when every item below its next_ordinal is completed; `done` last.
 */
export function assertProtocol(messages: AttemptMessage[], firstOrdinal: number, firstSeq = 1): void {
  const states = new Map<number, 'open' | 'completed'>();
  let seq = firstSeq;
  messages.forEach((m, at) => {
    switch (m.type) {
      case 'item.started':
        assert.is(m.ordinal, firstOrdinal + states.size, `ordinal ${m.ordinal} starts in order`);
        states.set(m.ordinal, 'open');
        break;
      case 'item.delta':
        assert.is(states.get(m.ordinal), 'open', `delta of open item ${m.ordinal}`);
        break;
      case 'item.completed':
        assert.is(states.get(m.ordinal), 'open', `completion of open item ${m.ordinal}`);
        states.set(m.ordinal, 'completed');
        break;
      case 'checkpoint':
        assert.is(m.seq, seq++, 'checkpoint seq');
        assert.is(m.next_ordinal, firstOrdinal + states.size, 'checkpoint next_ordinal is the first unused ordinal');
        assert.ok([...states.values()].every((s) => s === 'completed'), 'every item before a checkpoint is completed');
        break;
      case 'done':
        assert.is(at, messages.length - 1, 'done is the last message');
        break;
      case 'host.request':
        break;
      default: {
        const unreachable: never = m;
        throw new Error(`unknown message ${JSON.stringify(unreachable)}`);
      }
    }
  });
}
