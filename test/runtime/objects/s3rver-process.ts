import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';

// Runs s3rver in a child process for s3rver-harness.ts. A child because s3rver builds its
// ListObjectsV2 continuation tokens with DES, which Node 17+ (OpenSSL 3) only offers with
// --openssl-legacy-provider: in-process, every truncated listing would answer 500. The
// parent passes the folder as argv[2] and receives {port} over IPC.

interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
}
type S3rverConstructor = new (options: {
  address: string;
  port: number;
  silent: boolean;
  directory: string;
  configureBuckets: { name: string }[];
}) => S3rverInstance;

async function main(): Promise<void> {
  const directory = process.argv[2];
  const bucket = process.argv[3];
  if (directory === undefined || bucket === undefined || process.send === undefined) {
    throw new Error('usage: forked with IPC, argv: <directory> <bucket>');
  }
  // createRequire: s3rver is CommonJS without type declarations, loaded at this I/O edge.
  const S3rver = createRequire(import.meta.url)('s3rver') as S3rverConstructor;
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] });
  const { port } = await server.run();
  // The parent going away (normal stop or a crash) ends this process too.
  process.on('disconnect', () => {
    void server.close().finally(() => process.exit(0));
  });
  process.send({ port });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
