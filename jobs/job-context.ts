import { createMailTransport, type EngineHooks, type MailTransport, type OutboxHandlers, type Services } from '../runtime/index.js';
import { ENGINE_HOOKS } from './engine-hooks.js';
import { createOutboxHandlers } from './outbox-handlers.js';
import { outboxMetrics, type OutboxMetrics } from './outbox-metrics.js';

/** What every pass needs, built once per process (tests build their own and call passes). */
export interface JobContext {
  readonly services: Services;
  readonly engine: EngineHooks;
  readonly handlers: OutboxHandlers;
  readonly metrics: OutboxMetrics;
  readonly transport: MailTransport;
}

export function createJobContext(services: Services, options: { engine?: EngineHooks; transport?: MailTransport } = {}): JobContext {
  const engine = options.engine ?? ENGINE_HOOKS;
  const transport = options.transport ?? createMailTransport(services.config.mail, services.logger);
  return { services, engine, transport, handlers: createOutboxHandlers(engine, transport), metrics: outboxMetrics(services.metrics.registry) };
}

export function closeJobContext(context: JobContext): void {
  context.transport.close();
}
