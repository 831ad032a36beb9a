import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DiscoveryError, createProviderRegistry, type DiscoveredModel } from '../../../runtime/providers/index.js';

// Shared by the discovery tests: a local stand-in for a model vendor on 127.0.0.1 that
// records each request and answers in the vendor's real listing format.

export const KEY = 'sk-test-0123456789abcdef';

export function modelType(type: string) {
  const descriptor = createProviderRegistry({ enableLocalEnvironment: false }).get('model', type);
  if (!descriptor) throw new Error(`no model type ${type}`);
  return descriptor;
}

export interface Seen {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

export type Handler = (req: Seen, res: ServerResponse) => void;

export async function vendor(handler: Handler): Promise<{ base: string; seen: Seen[]; close: () => Promise<void> }> {
  const seen: Seen[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const entry = { method: req.method ?? '', path: url.pathname, query: url.searchParams, headers: req.headers, body };
      seen.push(entry);
      handler(entry, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

export function bySlug(models: DiscoveredModel[], slug: string): DiscoveredModel {
  const model = models.find((m) => m.slug === slug);
  if (!model) throw new Error(`${slug} not discovered; got ${models.map((m) => m.slug).join(', ')}`);
  return model;
}

export async function rejection(promise: Promise<unknown>): Promise<DiscoveryError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof DiscoveryError) return error;
    throw error;
  }
  throw new Error('expected a DiscoveryError');
}

