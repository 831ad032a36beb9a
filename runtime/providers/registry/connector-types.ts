import { Type } from '@sinclair/typebox';
import type { ConnectorProviderType } from './provider-type.js';
import { apiKeyCredential, configObject, requiredUrlField } from './schema-parts.js';

// The one connector type: an MCP server reached over Streamable HTTP. The server URL is not an
// override of a vendor default, so it is named `url`; it is still an endpoint and passes the
// endpoint policy like any base_url. Per-user OAuth of connections lives on the connection.

export const CONNECTOR_PROVIDER_TYPES: readonly ConnectorProviderType[] = [
  {
    kind: 'connector',
    type: 'mcp',
    display_name: 'MCP server',
    description: 'A Model Context Protocol server over Streamable HTTP.',
    configuration_schema: configObject({
      url: requiredUrlField('The server\'s Streamable HTTP endpoint, e.g. https://mcp.example.com/mcp.'),
      timeout_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 600, description: 'Per-request timeout.' })),
      allowed_tools: Type.Optional(
        Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { maxItems: 256, description: 'Expose only these tools.' }),
      ),
    }),
    credential_schema: apiKeyCredential({
      required: false,
      description: 'Token sent as Authorization: Bearer, when the server needs one.',
      headers: true,
    }),
    credential_required: false,
    setup_url: 'https://modelcontextprotocol.io/specification/2025-06-18/basic/transports',
    test: 'probe',
    endpoint_fields: ['url'],
    transports: ['streamable-http'],
  },
];
