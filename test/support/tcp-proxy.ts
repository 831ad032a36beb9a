import { createServer, connect, type Server, type Socket } from 'node:net';

/** A TCP proxy the test can cut, to make a dependency unreachable without stopping it. */
export interface TcpProxy {
  port: number;
  /** Drops every connection and refuses new ones until restored. */
  cut(): void;
  restore(): void;
  /**
   * From now on, a connection whose client sends bytes matching `pattern` gets nothing more
   * from the target: the target still receives (and answers) the request, the client never
   * hears. For a request that must be in flight, unanswered, when something else happens.
   */
  holdAnswersAfter(pattern: RegExp): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let cut = false;
  let holdAfter: RegExp | null = null;
  const server: Server = createServer((client) => {
    if (cut) return client.destroy();
    const upstream = connect(targetPort, targetHost);
    sockets.add(client).add(upstream);
    const end = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream).pipe(client);
    client.on('data', (chunk: Buffer) => {
      if (holdAfter?.test(chunk.toString('latin1'))) upstream.unpipe(client);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    cut() {
      cut = true;
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
    restore() {
      cut = false;
    },
    holdAnswersAfter(pattern) {
      holdAfter = pattern;
    },
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
