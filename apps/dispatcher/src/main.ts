import { join } from 'node:path';
import { createKnex, createSecretBox, migrate, resolveSecretKey, WEBHOOK_DUE_CHANNEL } from '@platform/db';
import pino from 'pino';
import { loadConfig } from './config';
import { Deliverer } from './deliver';
import { buildDeliveryRequest, type BearerTokenSource } from './delivery-request';
import { Dispatcher } from './loop';
import { startListener } from './listener';
import { createStatusServer } from './server';

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

  const secrets = createSecretBox(
    resolveSecretKey({
      key: config.SECRET_ENCRYPTION_KEY,
      file: config.SECRET_ENCRYPTION_KEY_FILE ?? join(config.DATA_DIR, 'keys', 'secret.key'),
      production: config.NODE_ENV === 'production',
    }),
  );
  const bearerToken: BearerTokenSource = async () => {
    throw new Error('service-signed bearer tokens are not configured');
  };
  const deliverer = new Deliverer({
    timeoutMs: config.WEBHOOK_TIMEOUT,
    allowPrivateTargets: config.ALLOW_PRIVATE_TARGETS,
    connectionsPerOrigin: config.DISPATCHER_CONNECTIONS_PER_ORIGIN,
  });
  const dispatcher = new Dispatcher({
    knex,
    logger,
    dispatcherId: config.DISPATCHER_ID,
    schedule: config.WEBHOOK_RETRY_SCHEDULE,
    concurrency: config.DISPATCHER_CONCURRENCY,
    batchSize: config.DISPATCHER_BATCH_SIZE,
    leaseMs: config.LEASE_MS,
    pollMs: config.DISPATCHER_POLL_INTERVAL,
    buildRequest: (webhook) => buildDeliveryRequest(webhook, { secrets, bearerToken, now: () => new Date() }),
    deliver: (request) => deliverer.deliver(request),
  });

  let notifications = 0;
  const wake = (reason: 'notification' | 'listen') => {
    logger.debug({ reason }, 'wake-up');
    dispatcher.wake();
  };
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
  dispatcher.start();
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
    }, config.DISPATCHER_SHUTDOWN_TIMEOUT + 10_000).unref();
    // stop taking work, finish what is in flight, write its results, then let go of everything
    await dispatcher.stop(config.DISPATCHER_SHUTDOWN_TIMEOUT);
    await deliverer.close();
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
