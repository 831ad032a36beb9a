import { createRequire } from 'node:module';
import type { Readable } from 'node:stream';

// smtp-server ships no types; the small part used here is declared locally.
interface SmtpServer {
  listen(port: number, host: string, done: () => void): void;
  close(done: () => void): void;
  server: { address(): { port: number } | string | null };
}
type SmtpServerClass = new (options: Record<string, unknown>) => SmtpServer;
const { SMTPServer } = createRequire(import.meta.url)('smtp-server') as { SMTPServer: SmtpServerClass };

export interface ReceivedMail {
  to: string[];
  raw: string;
}

/** A local SMTP server that keeps every message it receives. */
export class SmtpSink {
  readonly mails: ReceivedMail[] = [];
  private server: SmtpServer | null = null;
  port = 0;

  async start(): Promise<this> {
    this.server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onData: (stream: Readable, session: { envelope: { rcptTo: Array<{ address: string }> } }, done: () => void) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          this.mails.push({ to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8') });
          done();
        });
      },
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const address = this.server.server.address();
    this.port = typeof address === 'object' && address ? address.port : 0;
    return this;
  }

  /** The first token=… in the last mail to the address (quoted-printable soft breaks undone). */
  tokenFor(address: string): string {
    const mail = [...this.mails].reverse().find((m) => m.to.includes(address));
    if (!mail) throw new Error(`no mail to ${address}`);
    const text = mail.raw.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
    const match = /token=([A-Za-z0-9_%-]+)/.exec(text);
    if (!match) throw new Error('no link in the mail');
    return decodeURIComponent(match[1]!);
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
