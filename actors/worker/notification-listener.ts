import pg from 'pg';
import type { Logger } from '../../runtime/index.js';

const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 10_000;

/**
 * A dedicated connection that LISTENs on the engine's channels and reconnects when it drops
 * (database restart, failover, network), with exponential backoff and jitter so that many
 * workers do not hammer a database that is starting up. Notifications are only a wake-up: the
 * claim loop also polls and lease renewal reports cancels, so a NOTIFY missed while
 * reconnecting delays work by at most one poll interval and never loses it; `onConnected`
 * runs after every (re)connect so the owner can catch up at once.
 *
 * `prepare` runs on every new connection before LISTEN; the worker host takes its session
 * lock there (runtime worker-sessions.ts), which ties its liveness to this connection. A
 * prepare that answers false counts as a failed connect (retried with backoff); `ready` is
 * true only between a successful prepare and the loss of that connection, and `onLost` runs
 * once when a prepared connection is lost (for the worker host: its session lock is gone).
 */
export class NotificationListener {
  private client: pg.Client | null = null;
  private stopped = false;
  private retry: NodeJS.Timeout | null = null;
  private failures = 0;

  constructor(
    private readonly url: string,
    private readonly channels: string[],
    private readonly onNotify: (channel: string, payload: string) => void,
    private readonly logger: Logger,
    private readonly onConnected: () => void = () => undefined,
    private readonly prepare: (client: pg.Client) => Promise<boolean> = async () => true,
    private readonly onLost: () => void = () => undefined,
  ) {}

  private prepared: pg.Client | null = null;

  /** The current connection is up and prepared (for the worker host: it holds its session lock). */
  get ready(): boolean {
    return this.prepared !== null && this.prepared === this.client;
  }

  async start(): Promise<void> {
    if (this.stopped) return;
    const client = new pg.Client({ connectionString: this.url, application_name: 'svc-service:listen', connectionTimeoutMillis: 5000 });
    client.on('notification', (n) => this.onNotify(n.channel, n.payload ?? ''));
    // Only the current client may trigger a reconnect: a late event of a replaced client
    // (its 'end' after its 'error') must not tear down the healthy one.
    const lost = (error?: Error): void => {
      if (this.client !== client && this.client !== null) return;
      if (error) this.logger.warn({ err: error.message }, 'LISTEN connection lost; reconnecting');
      this.reconnect(client);
    };
    client.on('error', lost);
    client.on('end', () => lost());
    try {
      this.client = client;
      await client.connect();
      if (!(await this.prepare(client))) throw new Error('the connection could not be prepared (session lock held elsewhere)');
      for (const channel of this.channels) await client.query(`listen ${channel}`);
      if (this.client !== client) return;
      this.prepared = client;
      if (this.failures > 0) this.logger.info({ after_failures: this.failures }, 'LISTEN connection restored');
      this.failures = 0;
      this.onConnected();
    } catch (error) {
      if (this.failures === 0) this.logger.warn({ err: (error as Error).message }, 'LISTEN connection failed; retrying with backoff');
      this.reconnect(client);
    }
  }

  private reconnect(failed: pg.Client): void {
    if (this.client === failed) this.client = null;
    if (this.prepared === failed) {
      this.prepared = null;
      this.onLost();
    }
    failed.removeAllListeners('end');
    failed.removeAllListeners('notification');
    void failed.end().catch(() => undefined);
    if (this.stopped || this.retry) return;
    const delay = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** this.failures) * (0.5 + Math.random() / 2);
    this.failures++;
    this.retry = setTimeout(() => {
      this.retry = null;
      void this.start();
    }, delay);
    this.retry.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    const client = this.client;
    this.client = null;
    this.prepared = null;
    if (client) {
      client.removeAllListeners('end');
      client.removeAllListeners('error');
      client.on('error', () => undefined);
      await client.end().catch(() => undefined);
    }
  }
}
