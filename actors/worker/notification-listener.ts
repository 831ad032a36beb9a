import pg from 'pg';
import type { Logger } from '../../runtime/index.js';

/**
 * A dedicated connection that LISTENs on the engine's channels and reconnects when it drops.
 * Notifications are only a wake-up: the claim loop also polls, so a missed NOTIFY (e.g. while
 * reconnecting) delays work by at most one poll interval and never loses it.
 */
export class NotificationListener {
  private client: pg.Client | null = null;
  private stopped = false;
  private retry: NodeJS.Timeout | null = null;

  constructor(
    private readonly url: string,
    private readonly channels: string[],
    private readonly onNotify: (channel: string, payload: string) => void,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    if (this.stopped) return;
    const client = new pg.Client({ connectionString: this.url, application_name: 'svc-service:listen' });
    client.on('notification', (n) => this.onNotify(n.channel, n.payload ?? ''));
    client.on('error', () => this.reconnect());
    client.on('end', () => this.reconnect());
    try {
      await client.connect();
      for (const channel of this.channels) await client.query(`listen ${channel}`);
      this.client = client;
    } catch (error) {
      this.logger.warn({ err: (error as Error).message }, 'LISTEN connection failed; retrying');
      await client.end().catch(() => undefined);
      this.reconnect();
    }
  }

  private reconnect(): void {
    if (this.stopped || this.retry) return;
    this.client = null;
    this.retry = setTimeout(() => {
      this.retry = null;
      void this.start();
    }, 1000);
    this.retry.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    const client = this.client;
    this.client = null;
    if (client) {
      client.removeAllListeners('end');
      client.removeAllListeners('error');
      client.on('error', () => undefined);
      await client.end().catch(() => undefined);
    }
  }
}
