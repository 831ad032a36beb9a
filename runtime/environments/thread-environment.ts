import { setTimeout as sleep } from 'node:timers/promises';
import { AppError } from '../errors/index.js';
import { getEnvironmentById, getEnvironmentTemplate, getThreadEnvironment, touchEnvironment, type EnvironmentRow } from '../stores/index.js';
import { createEnvironment, deleteEnvironment, startEnvironment, stopEnvironment } from './environment-lifecycle.js';
import type { EnvironmentRuntime } from './environment-runtime.js';

// A run's environment (TOOLS.md "Environments"): the live environment of its thread for the
// agent's default_environment_template_id, created when there is none. A thread's later runs
// reuse it while it lives; a stopped one is started again; one that was deleted (idle too long)
// or is past its vendor lifetime (expires_at) is replaced by a new one.
//
// Only the run holding the thread's lease calls this (one accepted/running run per thread,
// RUNS.md invariant 1, and every caller is fenced by that lease first), so a thread's
// environment that is still `creating` was left by an earlier attempt of the run that is dead
// or fenced out: it is taken over and destroyed at once instead of waiting for its deadline.

export interface ThreadEnvironmentTarget {
  workspaceId: string;
  threadId: string;
  templateId: string;
  signal?: AbortSignal;
}

/** How long a run waits for an operation of another process (a sweep's stop) to end. */
const BUSY_WAIT_MS = 60_000;
const BUSY_POLL_MS = 200;

/**
 * The thread's environment, ready and just marked used. Serialized per thread in this process,
 * so two requests of one attempt never take each other's `creating` environment for a dead one.
 */
export function ensureThreadEnvironment(rt: EnvironmentRuntime, target: ThreadEnvironmentTarget): Promise<EnvironmentRow> {
  return rt.locks.run(`thread:${target.threadId}`, () => ensureUnlocked(rt, target));
}

async function ensureUnlocked(rt: EnvironmentRuntime, target: ThreadEnvironmentTarget): Promise<EnvironmentRow> {
  const db = rt.services.pool;
  const deadline = Date.now() + BUSY_WAIT_MS;
  for (;;) {
    if (target.signal?.aborted) throw new AppError('conflict', 'the request was cancelled');
    const env = await getThreadEnvironment(db, target.workspaceId, target.threadId, target.templateId);
    if (!env) {
      const created = await createFor(rt, target);
      if (created === null) continue; // raced with another creator: read the winner
      const used = await touchEnvironment(db, created.id);
      if (used) return used;
      continue;
    }
    if ((env.status === 'ready' || env.status === 'stopped') && env.operation === null && env.expires_at !== null && Date.parse(env.expires_at) <= Date.now()) {
      // Past its vendor lifetime (a Modal sandbox's timeout, a renewal that did not come in
      // time): the vendor has ended it, so it is deleted here and the loop creates a new one.
      await deleteEnvironment(rt, env, target.signal ? { signal: target.signal } : {}).catch(() => undefined);
      const after = await getEnvironmentById(db, env.id);
      if (after && after.status !== 'deleted' && Date.now() > deadline) {
        throw new AppError('unavailable', `environment ${env.id} has expired and could not be deleted`, { details: { reason: 'busy' } });
      }
      if (after?.status !== 'deleted') await sleep(BUSY_POLL_MS);
      continue;
    }
    if (env.status === 'ready' && env.operation === null) {
      const used = await touchEnvironment(db, env.id);
      if (used) return used;
    } else if (env.status === 'stopped' && env.operation === null) {
      await startEnvironment(rt, env, target.signal);
      continue;
    } else if (env.status === 'stopping' && env.operation === null) {
      // A stop whose vendor call failed: finish it, then the loop starts the environment again.
      await stopEnvironment(rt, env, undefined).catch(() => undefined);
    } else if (env.status === 'creating') {
      await deleteEnvironment(rt, env, { force: true, ...(target.signal ? { signal: target.signal } : {}) });
      continue;
    }
    if (Date.now() > deadline) {
      throw new AppError('unavailable', `environment ${env.id} stayed busy (${env.operation ?? env.status}) for ${BUSY_WAIT_MS / 1000} s`, { details: { reason: 'busy' } });
    }
    await sleep(BUSY_POLL_MS);
  }
}

async function createFor(rt: EnvironmentRuntime, target: ThreadEnvironmentTarget): Promise<EnvironmentRow | null> {
  const template = await getEnvironmentTemplate(rt.services.pool, target.workspaceId, target.templateId);
  if (!template) throw new AppError('not_found', `environment template ${target.templateId} not found`);
  const created = await createEnvironment(rt, { workspaceId: target.workspaceId, template, threadId: target.threadId, labels: {}, actorId: null, ...(target.signal ? { signal: target.signal } : {}) });
  if (created && created.status === 'failed') {
    const failure = created.failure ?? { code: 'environment_failed', message: 'the environment could not be created' };
    throw new AppError('unavailable', failure.message, { details: { reason: failure.code.replace(/^environment_/, ''), environment_id: created.id } });
  }
  return created;
}
