import { Type, type TObject, type TProperties } from '@sinclair/typebox';

// Building blocks shared by the type tables, so that every kind names the same things the
// same way: `base_url` for an endpoint override, `api_key` for an API key, `headers` for
// extra HTTP headers. No `format` keywords: TypeBox would need a global FormatRegistry entry
// to check them, and endpoints are checked by the endpoint policy instead.

const URL_MAX = 2048;

/** An optional endpoint override; the vendor default applies when it is absent. */
export function baseUrlField(description: string) {
  return Type.Optional(Type.String({ minLength: 1, maxLength: URL_MAX, description }));
}

/** A required endpoint (no vendor default exists). */
export function requiredUrlField(description: string) {
  return Type.String({ minLength: 1, maxLength: URL_MAX, description });
}

/** A secret string: `writeOnly` tells API clients and the console never to expect it back. */
export function secretField(description: string) {
  return Type.String({ minLength: 1, maxLength: 16_384, writeOnly: true, description });
}

// RFC 9110 token characters: what Node's fetch accepts as a header name.
const HEADER_NAME = '^[!#$%&\'*+.^_`|~0-9A-Za-z-]{1,128}$';

/** Extra HTTP headers; they often carry auth, so they live in the credential. */
export function headersField(description: string) {
  return Type.Optional(
    Type.Record(Type.String({ pattern: HEADER_NAME }), Type.String({ maxLength: 8192 }), {
      additionalProperties: false,
      maxProperties: 32,
      writeOnly: true,
      description,
    }),
  );
}

export interface ApiKeyCredentialOptions {
  /** Whether `api_key` itself is required (false when the type works without a key). */
  readonly required: boolean;
  readonly description: string;
  /** Vendor-specific secret fields beside `api_key`. */
  readonly extra?: TProperties;
  /** Whether the credential may carry extra headers (model and connector providers). */
  readonly headers?: boolean;
}

/** `{"api_key": …}` plus any vendor fields, closed against typos. */
export function apiKeyCredential(options: ApiKeyCredentialOptions): TObject {
  const apiKey = secretField(options.description);
  return Type.Object(
    {
      api_key: options.required ? apiKey : Type.Optional(apiKey),
      ...(options.extra ?? {}),
      ...(options.headers ? { headers: headersField('Extra HTTP headers sent with every request.') } : {}),
    },
    { additionalProperties: false },
  );
}

/** A credential schema for types that take no secret at all. */
export function noCredential(): TObject {
  return Type.Object({}, { additionalProperties: false, description: 'This type takes no credential.' });
}

/** A closed config object (unknown keys are refused so that typos surface at write time). */
export function configObject(properties: TProperties): TObject {
  return Type.Object(properties, { additionalProperties: false });
}
