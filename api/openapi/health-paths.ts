import { Type } from '@sinclair/typebox';
import { headerRef } from './common-components.js';
import type { JsonObject, SchemaComponents } from './schema-components.js';

// The shapes runtime/process/health-routes.ts answers (README "Processes and health"). Those
// routes are registered by the runtime on every role, outside the API route table.
const ProcessRole = Type.Union([Type.Literal('all'), Type.Literal('control'), Type.Literal('worker')], { description: 'the role this process runs' });
const Health = Type.Object({ status: Type.Literal('ok'), role: ProcessRole }, { $id: 'Health' });
const Ready = Type.Object(
  {
    status: Type.Literal('ready'),
    role: ProcessRole,
    degraded: Type.Optional(Type.Array(Type.Literal('redis'), { description: 'present while the key-value store is lost; the process stays ready (PostgreSQL holds all durable state)' })),
  },
  { $id: 'Readiness' },
);
const Unready = Type.Object(
  {
    status: Type.Literal('unavailable'),
    dependency: Type.Union([Type.Literal('runtime'), Type.Literal('database')], { description: 'runtime: starting, shutting down or a background task stopped; database: the schema could not be checked within server.readiness_timeout' }),
    role: ProcessRole,
  },
  { $id: 'Unreadiness' },
);

function json(description: string, schema: JsonObject): JsonObject {
  return { description, headers: { 'X-Request-Id': headerRef('X-Request-Id') }, content: { 'application/json': { schema } } };
}

/** Path items for /healthz and /readyz (no credential; served by every role). */
export function healthPaths(components: SchemaComponents): Record<string, JsonObject> {
  return {
    '/healthz': {
      get: {
        operationId: 'getHealth',
        summary: 'Liveness: answers while the process serves HTTP',
        tags: ['health'],
        security: [],
        responses: { 200: json('the process is alive', components.use(Health)) },
      },
    },
    '/readyz': {
      get: {
        operationId: 'getReadiness',
        summary: 'Readiness: whether this process should receive traffic',
        description: '503 before startup completes, during shutdown, after a background task stopped, or when the database schema cannot be checked in time.',
        tags: ['health'],
        security: [],
        responses: {
          200: json('ready', components.use(Ready)),
          503: json('not ready', components.use(Unready)),
        },
      },
    },
  };
}
