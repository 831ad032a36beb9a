// Child-process entry for the hello-world ceilings: `node hello-server.js uws|http`.
// Serves "hello" on a free 127.0.0.1 port, prints `{"port": N}` on stdout, and exits on
// SIGTERM or when its stdin closes (the harness went away).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import uws from 'uWebSockets.js';

const BODY = 'hello';

function announce(port: number): void {
  process.stdout.write(`${JSON.stringify({ port })}\n`);
}

function serveUws(): () => void {
  // The registry build silently falls back to a pure-JS emulation when the addon fails to
  // load; a ceiling measured on that would be meaningless, so refuse it (DESIGN.md).
  if (!String(uws.App).includes('[native code]')) throw new Error('uWebSockets.js native addon not loaded');
  const app = uws.App().get('/*', (res) => {
    res.end(BODY);
  });
  let token: uws.us_listen_socket | false = false;
  app.listen('127.0.0.1', 0, (listenSocket) => {
    if (!listenSocket) throw new Error('uws listen failed');
    token = listenSocket;
    announce(uws.us_socket_local_port(listenSocket));
  });
  return () => {
    // This uWS build has no app.close(); closing the listen socket and exiting is enough.
    if (token) uws.us_listen_socket_close(token);
  };
}

function serveHttp(): () => void {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': BODY.length });
    res.end(BODY);
  });
  // Autocannon keeps connections open; the default keep-alive timeout (5 s) would not close
  // them mid-run, but a long one keeps idle sockets from being recycled under load.
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => announce((server.address() as AddressInfo).port));
  return () => {
    server.closeAllConnections();
    server.close();
  };
}

function main(): void {
  const kind = process.argv[2];
  const stop = kind === 'uws' ? serveUws() : kind === 'http' ? serveHttp() : undefined;
  if (!stop) {
    process.stderr.write('usage: hello-server.js uws|http\n');
    process.exit(2);
  }
  const shutdown = (): void => {
    stop();
    process.exit(0);
  };
  process.on('SIGTERM', shutdown);
  process.stdin.on('end', shutdown);
  process.stdin.resume();
}

main();
