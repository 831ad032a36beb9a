import { schemaRef, type JsonObject } from './schema-components.js';

/** The error responses the pipeline itself can give (README "Errors"), by status. */
export const COMMON_ERRORS = {
  400: { name: 'InvalidArgument', code: 'invalid_argument', description: 'Malformed JSON, a schema violation, a bad path or query parameter, or a bad header (e.g. a malformed Idempotency-Key)' },
  401: { name: 'Unauthenticated', code: 'unauthenticated', description: 'Missing, malformed, expired or revoked credential', headers: ['WWW-Authenticate'] },
  403: { name: 'Forbidden', code: 'forbidden', description: 'The credential lacks the permission, or an API key names another workspace in X-Workspace-ID' },
  404: { name: 'NotFound', code: 'not_found', description: 'Absent, in another workspace, or X-Workspace-ID names a workspace the login session is not a member of' },
  409: { name: 'Conflict', code: 'idempotency_key_in_use', description: 'A request with the same Idempotency-Key is still in flight (`idempotency_key_in_use`); or a state conflict (`conflict`, `disabled`)' },
  412: { name: 'PreconditionFailed', code: 'precondition_failed', description: 'If-Match names another version (or another resource); `details.current_etag` holds the current ETag' },
  413: { name: 'PayloadTooLarge', code: 'payload_too_large', description: 'The request body exceeds the size limit' },
  415: { name: 'UnsupportedMediaType', code: 'unsupported_media_type', description: 'The request body has the wrong Content-Type' },
  422: { name: 'IdempotencyKeyReused', code: 'idempotency_key_reused', description: 'The Idempotency-Key was already used for a different request' },
  428: { name: 'PreconditionRequired', code: 'precondition_required', description: 'If-Match is required: send the ETag of the current view' },
  429: { name: 'RateLimited', code: 'rate_limited', description: 'Too many requests for this credential; retry after Retry-After seconds', headers: ['Retry-After'] },
  500: { name: 'Internal', code: 'internal', description: 'An unexpected error (logged under the request id; no details are returned)' },
  503: { name: 'Unavailable', code: 'unavailable', description: 'A dependency (database, object store) is down; retry after Retry-After seconds', headers: ['Retry-After'] },
} as const satisfies Record<number, { name: string; code: string; description: string; headers?: readonly string[] }>;

export type CommonErrorStatus = keyof typeof COMMON_ERRORS;

export const isCommonError = (status: number): status is CommonErrorStatus => status in COMMON_ERRORS;

export const headerRef = (name: string): JsonObject => ({ $ref: `#/components/headers/${name}` });
export const parameterRef = (name: string): JsonObject => ({ $ref: `#/components/parameters/${name}` });
export const responseRef = (name: string): JsonObject => ({ $ref: `#/components/responses/${name}` });

export const ERROR_SCHEMA_NAME = 'Error';
export const SECURITY_SCHEME = 'bearer';

/** The body of an error response: every error uses the one Error schema. */
export function errorContent(code: string): JsonObject {
  return {
    'application/json': {
      schema: schemaRef(ERROR_SCHEMA_NAME),
      example: { error: { code, message: 'a human-readable explanation', request_id: 'req_3f9c1a2b7d4e' } },
    },
  };
}

export function errorResponse(status: CommonErrorStatus, description: string = COMMON_ERRORS[status].description): JsonObject {
  const spec = COMMON_ERRORS[status];
  const headers: JsonObject = { 'X-Request-Id': headerRef('X-Request-Id') };
  for (const name of 'headers' in spec ? spec.headers : []) headers[name] = headerRef(name);
  return { description, headers, content: errorContent(spec.code) };
}

const REQUEST_ID_PATTERN = '^[A-Za-z0-9._:-]{8,128}$';

/** components.headers, components.parameters, components.responses and the security scheme. */
export function commonComponents(): { headers: JsonObject; parameters: JsonObject; responses: JsonObject; securitySchemes: JsonObject } {
  const responses: JsonObject = {};
  for (const [status, spec] of Object.entries(COMMON_ERRORS)) responses[spec.name] = errorResponse(Number(status) as CommonErrorStatus);
  return {
    headers: {
      'X-Request-Id': { description: 'The request id (the client\'s own when well-formed), repeated in error bodies and logs', schema: { type: 'string' } },
      ETag: { description: 'The current version of the resource, `"<id>:<version>"`; send it back in If-Match to update', schema: { type: 'string' } },
      'Idempotent-Replayed': { description: '`true` when this is the stored response of an earlier request with the same Idempotency-Key', schema: { type: 'string', enum: ['true'] } },
      'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer', minimum: 0 } },
      'WWW-Authenticate': { description: 'Always `Bearer`', schema: { type: 'string' } },
      'Cache-Control': { description: 'How long the response may be cached', schema: { type: 'string' } },
      'Content-Security-Policy': { description: 'The page loads scripts, styles and data only from this service', schema: { type: 'string' } },
    },
    parameters: {
      'X-Request-Id': { name: 'X-Request-Id', in: 'header', required: false, description: 'A client-chosen request id (8–128 of `[A-Za-z0-9._:-]`), kept in the response and logs; another value is replaced', schema: { type: 'string', pattern: REQUEST_ID_PATTERN } },
      'X-Workspace-ID': {
        name: 'X-Workspace-ID',
        in: 'header',
        required: false,
        description: 'The workspace to act in. Required with a login session (`svs_…`); an API key (`svk_…`) acts in its own workspace and needs none (naming another one is 403).',
        schema: { type: 'string', minLength: 1, maxLength: 128 },
      },
      'If-Match': { name: 'If-Match', in: 'header', required: true, description: 'The ETag of the current view, `"<id>:<version>"` (428 when missing, 412 when stale)', schema: { type: 'string', minLength: 1 } },
    },
    responses,
    securitySchemes: {
      [SECURITY_SCHEME]: {
        type: 'http',
        scheme: 'bearer',
        description:
          '`Authorization: Bearer <token>` with either a workspace API key (`svk_…`, created with POST /api/v1/api-keys, acts in its own workspace) or a login session token (`svs_…`, from POST /api/v1/auth/login; workspace routes also need X-Workspace-ID). Only a SHA-256 of each is stored.',
      },
    },
  };
}

/** The Idempotency-Key request header (not a component: whether it is required varies). */
export function idempotencyKeyParameter(mode: 'required' | 'optional'): JsonObject {
  return {
    name: 'Idempotency-Key',
    in: 'header',
    required: mode === 'required',
    description: 'Makes a retry safe: the same key with the same request replays the stored response (with `Idempotent-Replayed: true`) for at least 24 hours; with a different request it is 422, while the first is in flight 409.',
    schema: { type: 'string', minLength: 1, maxLength: 512, pattern: '^[!-~]+$' },
  };
}
