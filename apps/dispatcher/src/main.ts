import { createKnex, migrate, WEBHOOK_DUE_CHANNEL } from '@platform/db';
import pino from 'pino';
import { loadConfig } from './config';
import { startListener } from './listener';
import { createStatusServer } from './server';

/** How long in-flight work may take to finish after SIGTERM before the process gives up. */
const SHUTDOWN_DEADLINE_MS = 10_000;

/** Wires config, database, LISTEN and the status server, and shuts down cleanly on SIGTERM/SIGINT. */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = pino({
    level: config.LOG_LEVEL,
    base: { service: 'dispatcher', dispatcherId: config.DISPATCHER_ID },
  });
  const knex = createKnex(config.DATABASE_URL, {
    pool: { max: 5 },
    applicationName: 'platform-dispatcher',
  });
  // A dispatcher may start before anything else touched the database; the migration lock makes
  // this safe next to an API or other dispatchers doing the same.
  await migrate(knex);

  let notifications = 0;
  // The claim-and-deliver loop arrives with the delivery issue; until then a wake-up is only logged.
  const wake = (reason: 'notification' | 'listen') => logger.debug({ reason }, 'wake-up');
  const listener = startListener({
    connectionString: config.DATABASE_URL,
    channel: WEBHOOK_DUE_CHANNEL,
    logger,
    onNotification: () => {
      notifications++;
      wake('notification');
    },
    onListen: () => wake('listen'),
  });

  const server = createStatusServer({
    listening: () => listener.listening,
    notificationsTotal: () => notifications,
  });
  server.on('error', (error) => {
    logger.fatal({ err: error }, 'status server failed');
    process.exit(1);
  });
  server.listen(config.DISPATCHER_PORT, () => {
    logger.info(
      { port: config.DISPATCHER_PORT },
      `dispatcher status on http://127.0.0.1:${config.DISPATCHER_PORT}/healthz`,
    );
  });

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    setTimeout(() => {
      logger.error('did not stop within the deadline; exiting');
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS).unref();
    await listener.stop();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections(); // status requests are short; nothing worth waiting for
    });
    await knex.destroy();
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
