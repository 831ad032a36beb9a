// The run's connection_tools as the attempt sees them (TOOLS.md "Connections"): per
// connection, its server URL, timeout, allowed tools and the thread's mcp_headers for it.
// Read with the checks of any use: a missing, disabled or revoked connection, a disabled
// provider or a URL the endpoint policy refuses fails the attempt with its code before any
// model request. No credential or token goes into the start message: the attempt asks for
// the headers of each request (host request connection.authorize).
import { AppError, connectionFailureCode, connectionTarget, getThreadState, type RunRow, type Services } from '../../../runtime/index.js';
import type { ConnectionsResource } from '../../attempt/index.js';

export async function prepareConnections(services: Services, run: RunRow): Promise<ConnectionsResource | null> {
  const entries = (run.config.connection_tools as Array<{ connection_id: string }> | undefined) ?? [];
  if (entries.length === 0) return null;
  const policy = { allowedHttpOrigins: services.config.providers.allowed_http_origins };
  const thread = await getThreadState(services.pool, run.workspace_id, run.thread_id);
  const connections = await Promise.all(
    entries.map(async ({ connection_id }) => {
      try {
        const target = await connectionTarget(services.pool, run.workspace_id, connection_id, policy);
        return {
          connection_id,
          name: target.connection.name,
          url: target.url,
          timeout_ms: target.timeout_ms,
          allowed_tools: target.allowed_tools,
          headers: thread?.mcp_headers[connection_id] ?? {},
        };
      } catch (error) {
        // details.failure_code: the run's failure code (a bare `disabled` would read as the model's).
        if (error instanceof AppError && error.code !== 'internal') throw new AppError(error.code, error.message, { details: { ...error.details, failure_code: connectionFailureCode(error) } });
        throw error;
      }
    }),
  );
  return { connections };
}
