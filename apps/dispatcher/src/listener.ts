import pg from 'pg';
import type { Logger } from 'pino';

export interface ListenerOptions {
  connectionString: string;
  channel: string;
  logger: Logger;
  /** Called for every notification on the channel. */
  onNotification: (payload: string | undefined) => void;
  /**
   * Called each time LISTEN is (re)established. Notifications sent while the connection was down
   * are lost, so this is the moment to look for due work.
   */
  onListen?: () => void;
  /** First and largest wait between reconnection attempts. */
  backoff?: { initialMs: number; maxMs: number };
}

export interface Listener {
  /** Whether the LISTEN connection is up right now. */
  readonly listening: boolean;
  /** Closes the connection and stops reconnecting. */
  stop(): Promise<void>;
}

/** Application name of the LISTEN connection, so operators (and tests) can find it. */
export const LISTENER_APPLICATION_NAME = 'platform-dispatcher-listener';

/**
 * LISTENs on `channel` over a dedicated connection (a pooled one would be handed to queries and
 * lose its LISTEN), reconnecting with exponential backoff whenever the connection drops.
 */
export function startListener(options: ListenerOptions): Listener {
  const { initialMs, maxMs } = options.backoff ?? { initialMs: 250, maxMs: 30_000 };
  const log = options.logger;
  let current: pg.Client | undefined;
  let listening = false;
  let stopped = false;
  let failures = 0;
  let retryTimer: NodeJS.Timeout | undefined;

  const connect = async () => {
    const client = new pg.Client({
      connectionString: options.connectionString,
      application_name: LISTENER_APPLICATION_NAME,
      connectionTimeoutMillis: 10_000,
      // An idle LISTEN connection sends nothing; TCP keepalive is what notices a dead peer.
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    });
    current = client;
    client.on('notification', (message) => {
      if (message.channel === options.channel) options.onNotification(message.payload);
    });
    // Kept for the client's whole life: an 'error' without a listener would crash the process.
    client.on('error', (error) => lost(client, error));
    client.on('end', () => lost(client));
    try {
      await client.connect();
      await client.query(`listen ${client.escapeIdentifier(options.channel)}`);
    } catch (error) {
      lost(client, error);
      return;
    }
    if (current !== client) return; // stopped or replaced while connecting
    listening = true;
    failures = 0;
    log.info({ channel: options.channel }, 'listening for wake-ups');
    options.onListen?.();
  };

  const lost = (client: pg.Client, error?: unknown) => {
    if (current !== client) return; // an old connection's late event
    current = undefined;
    listening = false;
    client.end().catch(() => {});
    if (stopped) return;
    const delayMs = Math.min(maxMs, initialMs * 2 ** failures) * (0.5 + Math.random() / 2);
    failures++;
    log.warn({ err: error, delayMs: Math.round(delayMs), failures }, 'LISTEN connection lost; reconnecting');
    retryTimer = setTimeout(() => void connect(), delayMs);
  };

  void connect();
  return {
    get listening() {
      return listening;
    },
    stop: async () => {
      stopped = true;
      clearTimeout(retryTimer);
      listening = false;
      const client = current;
      current = undefined;
      await client?.end().catch(() => {});
    },
  };
}
