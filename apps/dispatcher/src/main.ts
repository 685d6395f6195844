import { join } from 'node:path';
import {
  createKnex,
  createSecretBox,
  loadSigningKey,
  migrate,
  queueStats,
  rememberingOpen,
  resolvePrivateKeyPem,
  resolveSecretKey,
  WEBHOOK_DUE_CHANNEL,
} from '@platform/db';
import { loadConfig } from './config';
import { Deliverer } from './deliver';
import { createLogger } from './logger';
import { buildDeliveryRequest } from './delivery-request';
import { Dispatcher } from './loop';
import { startListener } from './listener';
import { Maintenance } from './maintenance';
import { createDispatcherMetrics, QUEUE_STATS_CAP } from './metrics';
import { createStatusServer } from './server';
import { createWebhookTokenSource } from './target-auth';

/** Wires config, database, LISTEN and the status server, and shuts down cleanly on SIGTERM/SIGINT. */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger({ level: config.LOG_LEVEL, dispatcherId: config.DISPATCHER_ID });
  const knex = createKnex(config.DATABASE_URL, {
    // claims and result writes (the loop), scrapes, and the statements of two maintenance jobs
    pool: { max: 10 },
    applicationName: 'platform-dispatcher',
    synchronousCommit: false,
  });
  // A dispatcher may start before anything else touched the database; the migration lock makes
  // this safe next to an API or other dispatchers doing the same.
  await migrate(knex);

  // every delivery opens its registration's signing secret: remember them instead of decrypting each time
  const secrets = rememberingOpen(
    createSecretBox(
      resolveSecretKey({
        key: config.SECRET_ENCRYPTION_KEY,
        file: config.SECRET_ENCRYPTION_KEY_FILE ?? join(config.DATA_DIR, 'keys', 'secret.key'),
        production: config.NODE_ENV === 'production',
      }),
    ),
  );
  // the API's key, so the JWKS it publishes verifies the tokens targets receive
  const signingKey = await loadSigningKey(
    resolvePrivateKeyPem({
      pem: config.JWT_PRIVATE_KEY,
      file: config.JWT_PRIVATE_KEY_FILE ?? join(config.DATA_DIR, 'keys', 'jwt-private.pem'),
      production: config.NODE_ENV === 'production',
    }),
  );
  const bearerToken = createWebhookTokenSource({
    knex,
    key: signingKey,
    issuer: config.JWT_ISSUER,
    audience: config.JWT_AUDIENCE,
    logger,
  });
  const deliverer = new Deliverer({
    timeoutMs: config.WEBHOOK_TIMEOUT,
    allowPrivateTargets: config.ALLOW_PRIVATE_TARGETS,
    connectionsPerOrigin: config.DISPATCHER_CONNECTIONS_PER_ORIGIN,
  });
  // set once the listener and the loop exist; the metrics read them only when scraped
  let listening = () => false;
  let loopAlive = () => false;
  let inFlight = () => 0;
  const metrics = createDispatcherMetrics({
    listening: () => listening(),
    loopAlive: () => loopAlive(),
    inFlight: () => inFlight(),
    queueStats: () => queueStats(knex, { cap: QUEUE_STATS_CAP }),
    onCollectError: (error, name) => logger.warn({ err: error, metric: name }, 'metric not collected'),
  });
  const dispatcher = new Dispatcher({
    knex,
    logger,
    dispatcherId: config.DISPATCHER_ID,
    schedule: config.WEBHOOK_RETRY_SCHEDULE,
    concurrency: config.DISPATCHER_CONCURRENCY,
    batchSize: config.DISPATCHER_BATCH_SIZE,
    leaseMs: config.LEASE_MS,
    launchWithinMs: (config.LEASE_MS - config.WEBHOOK_TIMEOUT) / 2,
    pollMs: config.DISPATCHER_POLL_INTERVAL,
    buildRequest: (webhook) => buildDeliveryRequest(webhook, { secrets, bearerToken, now: () => new Date() }),
    deliver: (request) => deliverer.deliver(request),
    onResult: (result) => metrics.recordAttempt(result),
  });
  // A live loop turns at least once per poll interval (plus a claim); twice that and half a
  // minute more without a turn means it hangs, and /healthz says so.
  const stalledAfterMs = 2 * config.DISPATCHER_POLL_INTERVAL + 30_000;
  const loopState = () =>
    !dispatcher.isRunning
      ? ('stopped' as const)
      : Date.now() - dispatcher.lastTurnAt > stalledAfterMs
        ? ('stalled' as const)
        : ('running' as const);
  loopAlive = () => loopState() === 'running';
  inFlight = () => dispatcher.active;

  const wake = (reason: 'notification' | 'listen') => {
    logger.debug({ reason }, 'wake-up');
    dispatcher.wake();
  };
  const listener = startListener({
    connectionString: config.DATABASE_URL,
    channel: WEBHOOK_DUE_CHANNEL,
    logger,
    onNotification: () => {
      metrics.notifications.inc();
      wake('notification');
    },
    onListen: () => wake('listen'),
  });

  listening = () => listener.listening;

  const maintenance = new Maintenance({
    knex,
    connectionString: config.DATABASE_URL,
    logger,
    pruneSchedule: config.DISPATCHER_PRUNE_SCHEDULE,
    repairSchedule: config.DISPATCHER_REPAIR_SCHEDULE,
    webhookRetentionMs: config.WEBHOOK_RETENTION,
    attemptRetentionMs: config.WEBHOOK_ATTEMPT_RETENTION,
    onRun: (job, result, report) => {
      metrics.maintenanceRuns.inc({ job, result });
      if (report && 'attempts' in report) {
        metrics.prunedRows.inc({ table: 'webhook_attempts' }, report.attempts);
        metrics.prunedRows.inc({ table: 'webhooks' }, report.webhooks);
        metrics.prunedRows.inc({ table: 'entity_changes' }, report.entityChanges);
      }
      if (report && 'promoted' in report) {
        metrics.repairedGroups.inc({ action: 'promoted' }, report.promoted);
        metrics.repairedGroups.inc({ action: 'recounted' }, report.recounted);
      }
    },
  });

  const server = createStatusServer({
    health: () => ({ listening: listener.listening, loop: loopState(), inFlight: dispatcher.active }),
    metrics: () => metrics.registry.render(),
  });
  server.on('error', (error) => {
    logger.fatal({ err: error }, 'status server failed');
    process.exit(1);
  });
  dispatcher.start();
  maintenance.start();
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
    const maintenanceStopped = maintenance.stop();
    await dispatcher.stop(config.DISPATCHER_SHUTDOWN_TIMEOUT);
    const abandoned = dispatcher.active;
    if (abandoned > 0) {
      // their rows stay leased and are delivered again once the lease runs out (at-least-once)
      logger.warn({ abandoned }, 'deliveries still in flight at the shutdown deadline; left to their lease');
    }
    // close() waits for in-flight requests, which after the deadline we no longer do
    await Promise.race([
      deliverer.close(),
      new Promise((resolve) => setTimeout(resolve, abandoned > 0 ? 0 : 1000)),
    ]);
    await maintenanceStopped;
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
