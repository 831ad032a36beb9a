// AWS Signature Version 4 for one HTTP request (header-based, payload hashed).
// canonical request = method \n canonical URI \n canonical query \n canonical headers \n
//                     signed header names \n hex(sha256(payload))
// string to sign    = "AWS4-HMAC-SHA256" \n amz-date \n scope \n hex(sha256(canonical request))
// signing key       = HMAC chain "AWS4"+secret → yyyymmdd → region → service → "aws4_request"
// Services other than S3 expect every path segment URI-encoded twice in the canonical URI:
// the path as sent is already encoded once, so it is encoded once more here.
import { createHash, createHmac } from 'node:crypto';

export interface SigV4Credentials {
  access_key_id: string;
  secret_access_key: string;
  session_token?: string | undefined;
}

export interface SigV4Request {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  region: string;
  service: string;
  credentials: SigV4Credentials;
  now: Date;
}

/** Returns the request's headers plus x-amz-date, the session token (if any) and Authorization. */
export function signSigV4(req: SigV4Request): Record<string, string> {
  const url = new URL(req.url);
  const amzDate = req.now.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  const date = amzDate.slice(0, 8);
  const payloadHash = sha256Hex(req.body);
  // x-amz-content-sha256 is an S3 requirement; other services hash the payload themselves.
  const headers: Record<string, string> = { ...req.headers, 'x-amz-date': amzDate };
  if (req.credentials.session_token) headers['x-amz-security-token'] = req.credentials.session_token;

  const toSign: Record<string, string> = { host: url.host };
  for (const [name, value] of Object.entries(headers)) toSign[name.toLowerCase()] = value;
  const names = Object.keys(toSign).sort();
  const canonicalHeaders = names.map((n) => `${n}:${(toSign[n] ?? '').trim().replace(/\s+/g, ' ')}\n`).join('');
  const signedHeaders = names.join(';');
  const canonicalRequest = [
    req.method.toUpperCase(),
    canonicalUri(url.pathname),
    canonicalQuery(url.searchParams),
    canonicalHeaders,
    signedHeaders,
    payloadHash,
  ].join('\n');
  const scope = `${date}/${req.region}/${req.service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
  let key = hmac(`AWS4${req.credentials.secret_access_key}`, date);
  for (const part of [req.region, req.service, 'aws4_request']) key = hmac(key, part);
  const signature = createHmac('sha256', key).update(stringToSign, 'utf8').digest('hex');
  headers.authorization = `AWS4-HMAC-SHA256 Credential=${req.credentials.access_key_id}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return headers;
}

/** RFC 3986 encoding: encodeURIComponent leaves !'()* alone, SigV4 does not. */
export function uriEncode(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function canonicalUri(pathname: string): string {
  if (pathname === '' || pathname === '/') return '/';
  return pathname.split('/').map(uriEncode).join('/');
}

function canonicalQuery(params: URLSearchParams): string {
  return [...params.entries()]
    .map(([k, v]) => [uriEncode(k), uriEncode(v)] as const)
    .sort(([ak, av], [bk, bv]) => (ak === bk ? (av < bv ? -1 : av > bv ? 1 : 0) : ak < bk ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

function hmac(key: string | Buffer, data: string): Buffer {
  return createHmac('sha256', key).update(data, 'utf8').digest();
}
