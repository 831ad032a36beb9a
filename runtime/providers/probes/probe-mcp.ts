import { credentialHeaders, credentialString, type ProviderCredential } from '../provider-credential.js';
import { failed, redactSecrets, succeeded, type ProbeBudget, type ProbeResult } from './probe-result.js';
import { ProbeTransportError, sendProbe, statusMessage } from './probe-request.js';

// The MCP connector's probe: one `initialize` JSON-RPC request over Streamable HTTP
// (MCP 2025-06-18, basic/transports). The server answers either a JSON body or an SSE stream
// whose events carry JSON-RPC messages; the read stops at the response to our request id.
// The session the server may open is left to expire: ending it would be a second call.

export const MCP_PROTOCOL_VERSION = '2025-06-18';
const REQUEST_ID = 1;

export function initializeRequest(): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id: REQUEST_ID,
    method: 'initialize',
    params: { protocolVersion: MCP_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'svc-service', version: '1' } },
  });
}

type JsonRpcAnswer = { result?: unknown; error?: { message?: unknown } };

/** The JSON-RPC response to our request in an SSE text, when one is complete. */
function fromEventStream(text: string): JsonRpcAnswer | undefined {
  for (const event of text.split(/\r?\n\r?\n/).slice(0, -1)) {
    const data = event
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).replace(/^ /, ''))
      .join('\n');
    const answer = parseAnswer(data);
    if (answer) return answer;
  }
  return undefined;
}

function parseAnswer(text: string): JsonRpcAnswer | undefined {
  try {
    const value = JSON.parse(text) as { id?: unknown } & JsonRpcAnswer;
    return typeof value === 'object' && value !== null && value.id === REQUEST_ID ? value : undefined;
  } catch {
    return undefined;
  }
}

function verdict(answer: JsonRpcAnswer | undefined, secrets: readonly string[]): ProbeResult {
  if (!answer) return failed('the server did not answer initialize with a JSON-RPC response');
  if (answer.error) {
    const message = typeof answer.error.message === 'string' ? answer.error.message.slice(0, 300) : 'no message';
    return failed(redactSecrets(`the server refused initialize: ${message}`, secrets));
  }
  const result = answer.result as { protocolVersion?: unknown } | undefined;
  if (typeof result?.protocolVersion !== 'string') return failed('the initialize result names no protocolVersion');
  return succeeded();
}

export async function probeMcp(config: Readonly<Record<string, unknown>>, credential: ProviderCredential | null, budget: ProbeBudget): Promise<ProbeResult> {
  const url = new URL(String(config['url']));
  const token = credentialString(credential, 'api_key');
  const extra = credentialHeaders(credential) ?? {};
  const secrets = [...(token ? [token] : []), ...Object.values(extra)];
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...(token ? { authorization: `Bearer ${token}` } : {}),
    ...extra,
  };
  try {
    const response = await sendProbe({ url, method: 'POST', headers, body: initializeRequest(), until: (text) => fromEventStream(text) !== undefined }, budget);
    if (response.status < 200 || response.status >= 300) return failed(statusMessage(response, url));
    const answer = response.contentType.includes('text/event-stream') ? fromEventStream(`${response.text}\n\n`) : parseAnswer(response.text);
    return verdict(answer, secrets);
  } catch (error) {
    if (error instanceof ProbeTransportError) return failed(error.message);
    throw error;
  }
}
