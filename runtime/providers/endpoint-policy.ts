// The deployment's outbound endpoint policy (spec 2.13 rule 3) for provider base URLs,
// connection endpoints and webhook URLs. https is always allowed; plain http only for an
// origin the operator lists in providers.allowed_http_origins. Private IP addresses are
// deliberately not blocked: self-hosted vendors (Ollama, gateways) live on private networks.

export interface EndpointPolicy {
  /** Plain-HTTP origins allowed, e.g. ["http://127.0.0.1:11434"]. */
  readonly allowedHttpOrigins: readonly string[];
}

export const ENDPOINT_REFUSALS = ['malformed', 'scheme', 'userinfo', 'fragment', 'http_not_allowed'] as const;
export type EndpointRefusal = (typeof ENDPOINT_REFUSALS)[number];

export type EndpointCheck =
  | { readonly ok: true; readonly url: URL }
  | { readonly ok: false; readonly code: EndpointRefusal; readonly reason: string };

const MAX_URL_LENGTH = 2048;

// Whitespace and control characters: the URL parser silently strips or encodes them, so a
// stored value could differ from the one that was checked.
const UNSAFE_CHARACTERS = /[\u0000-\u0020\u007f\\]/;

/**
 * The origin of a plain-HTTP allow-list entry, normalised the way URL.origin normalises
 * (lowercase host, default port dropped); undefined when the entry is not a bare http origin.
 */
export function normaliseHttpOrigin(entry: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(entry);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== 'http:' || parsed.username !== '' || parsed.password !== '') return undefined;
  if ((parsed.pathname !== '/' && parsed.pathname !== '') || parsed.search !== '' || parsed.hash !== '') return undefined;
  return parsed.origin;
}

export function checkEndpoint(url: string, policy: EndpointPolicy): EndpointCheck {
  const refuse = (code: EndpointRefusal, reason: string): EndpointCheck => ({ ok: false, code, reason });
  if (typeof url !== 'string' || url.length === 0 || url.length > MAX_URL_LENGTH) {
    return refuse('malformed', `endpoint must be a URL of 1 to ${MAX_URL_LENGTH} characters`);
  }
  if (UNSAFE_CHARACTERS.test(url)) return refuse('malformed', 'endpoint contains whitespace, control characters or a backslash');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return refuse('malformed', 'endpoint is not an absolute URL');
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    return refuse('scheme', `scheme ${parsed.protocol.replace(/:$/, '')} is not allowed; use https`);
  }
  // Checked on the raw text too: "https://@host" parses with an empty username but still
  // smuggles an authority section that proxies and logs read differently.
  const authority = url.slice(url.indexOf('//') + 2).split(/[/?#]/, 1)[0] ?? '';
  if (parsed.username !== '' || parsed.password !== '' || authority.includes('@')) {
    return refuse('userinfo', 'endpoint must not carry credentials (user:password@); store them in the credential');
  }
  if (parsed.hash !== '' || url.includes('#')) return refuse('fragment', 'endpoint must not have a fragment');
  if (parsed.hostname === '') return refuse('malformed', 'endpoint has no host');
  if (parsed.protocol === 'http:') {
    const allowed = policy.allowedHttpOrigins.some((entry) => normaliseHttpOrigin(entry) === parsed.origin);
    if (!allowed) {
      return refuse('http_not_allowed', `plain http to ${parsed.origin} is not allowed; use https or ask the operator to allow the origin`);
    }
  }
  return { ok: true, url: parsed };
}
