import type { AddressInfo } from 'node:net';
import { buildDeliveryRequest, createWebhookTokenSource, Deliverer } from '@platform/delivery';
import { traceDelivery } from '@platform/tracing';
import {
  DELIVERIES_STOPPED_PAYLOAD,
  parseDueIds,
  queueStats,
  WEBHOOK_DUE_CHANNEL,
  type Knex,
} from '@platform/db';
import { rememberingOpen, type SecretBox, type SigningKey } from '@platform/crypto';
import type { Logger } from 'pino';
import { systemClock, type Clock } from './clock';
import type { Config } from './config';
import { startListener, type Listener } from './listener';
import { DeliveryLoop } from './loop';
import { Maintenance } from './maintenance';
import { OperatorNotifier } from './operator-notifications';
import { createDispatcherMetrics, QUEUE_STATS_CAP, type DispatcherMetrics } from './metrics';
import { createStatusServer, type DispatcherHealth } from './server';
import { TargetLimits } from './target-limits';

/** What the dispatcher needs from outside: built by main.ts, or by a test. */
export interface DispatcherDeps {
  config: Config;
  /** Migrated; the caller owns it and destroys it after `stop`. */
  knex: Knex;
  logger: Logger;
  /** Opens sealed signing secrets and target credentials (the API's key). */
  secrets: SecretBox;
  /** The API's signing key, so the JWKS it publishes verifies the tokens targets receive. */
  signingKey: SigningKey;
  /** The system clock unless a test moves time itself. */
  clock?: Clock;
}

export interface Dispatcher {
  /**
   * Starts LISTEN, the loop, maintenance and the status server; resolves with the status
   * server's address once it listens, and rejects (after a fatal log line) if it cannot.
   */
  start(): Promise<AddressInfo>;
  /**
   * Stops taking work, lets in-flight deliveries finish until `DISPATCHER_SHUTDOWN_TIMEOUT`,
   * writes their results, and closes everything it opened (not the knex it was given). Calling
   * it again answers the same promise.
   */
  stop(): Promise<void>;
  /** What `/healthz` reports right now. */
  health(): DispatcherHealth;
  readonly metrics: DispatcherMetrics;
}

/**
 * The delivery daemon, assembled: the claim loop and its deliverer, the LISTEN connection that
 * wakes it, the maintenance jobs, the metrics and the `/healthz` + `/metrics` server. Nothing
 * runs until `start`; nothing here reads the environment or ends the process.
 */
export function createDispatcher(deps: DispatcherDeps): Dispatcher {
  const { config, knex, logger } = deps;
  const clock = deps.clock ?? systemClock;
  const now = () => new Date(clock.now());
  // every delivery opens its registration's signing secret: remember them instead of decrypting each time
  const secrets = rememberingOpen(deps.secrets);
  const bearerToken = createWebhookTokenSource({
    knex,
    key: deps.signingKey,
    issuer: config.JWT_ISSUER,
    audience: config.JWT_AUDIENCE,
    logger,
    now,
  });
  const deliverer = new Deliverer({
    timeoutMs: config.WEBHOOK_TIMEOUT,
    allowPrivateTargets: config.ALLOW_PRIVATE_TARGETS,
    connectionsPerOrigin: config.CONNECTIONS_PER_ORIGIN,
  });
  // the listener exists once started; the metrics and /healthz read it only when asked
  let listener: Listener | undefined;
  const metrics = createDispatcherMetrics({
    listening: () => listener?.listening ?? false,
    loopAlive: () => loopState() === 'running',
    inFlight: () => loop.active,
    queueStats: () => queueStats(knex, { cap: QUEUE_STATS_CAP }),
    onCollectError: (error, name) => logger.warn({ err: error, metric: name }, 'metric not collected'),
  });
  const loop = new DeliveryLoop({
    knex,
    logger,
    dispatcherId: config.DISPATCHER_ID,
    schedule: config.WEBHOOK_RETRY_SCHEDULE,
    concurrency: config.DISPATCHER_CONCURRENCY,
    batchSize: config.DISPATCHER_BATCH_SIZE,
    leaseMs: config.LEASE_MS,
    launchWithinMs: (config.LEASE_MS - config.WEBHOOK_TIMEOUT) / 2,
    pollMs: config.DISPATCHER_POLL_INTERVAL,
    lingerMs: config.DISPATCHER_FLUSH_LINGER,
    limits: new TargetLimits({
      concurrency: config.DISPATCHER_CONCURRENCY,
      maxPerTarget: config.MAX_PER_ENDPOINT,
      maxPerHost: config.MAX_PER_HOST,
      slowMs: config.WEBHOOK_TIMEOUT / 4,
      now: () => clock.now(),
    }),
    policy: {
      breakerFailures: config.DISPATCHER_BREAKER_FAILURES,
      breakerCooldownMs: config.DISPATCHER_BREAKER_COOLDOWN,
      breakerMaxCooldownMs: config.DISPATCHER_BREAKER_MAX_COOLDOWN,
      disableAfterMs: config.WEBHOOK_DISABLE_AFTER,
      disableMinAttempts: config.WEBHOOK_DISABLE_MIN_ATTEMPTS,
    },
    onDisabled: (disabled) => {
      for (const { reason } of disabled) metrics.disabledRegistrations.inc({ reason });
    },
    buildRequest: (webhook) => buildDeliveryRequest(webhook, { secrets, bearerToken, now }),
    // one span per attempt, continuing the writer's trace, when tracing is on (else a plain call)
    deliver: (request, webhook) => traceDelivery(webhook, request, (traced) => deliverer.deliver(traced)),
    onResult: (result) => metrics.recordAttempt(result),
    onClaim: (kind) => metrics.claims.inc({ kind }),
    clock,
  });
  // A live loop turns at least once per poll interval (plus a claim); twice that and half a
  // minute more without a turn means it hangs, and /healthz says so.
  const stalledAfterMs = 2 * config.DISPATCHER_POLL_INTERVAL + 30_000;
  const loopState = (): DispatcherHealth['loop'] =>
    !loop.isRunning ? 'stopped' : clock.now() - loop.lastTurnAt > stalledAfterMs ? 'stalled' : 'running';
  const health = (): DispatcherHealth => ({
    listening: listener?.listening ?? false,
    loop: loopState(),
    inFlight: loop.active,
  });

  const maintenance = new Maintenance({
    knex,
    connectionString: config.DATABASE_URL,
    logger,
    pruneSchedule: config.DISPATCHER_PRUNE_SCHEDULE,
    repairSchedule: config.DISPATCHER_REPAIR_SCHEDULE,
    webhookRetentionMs: config.WEBHOOK_RETENTION,
    attemptRetentionMs: config.WEBHOOK_ATTEMPT_RETENTION,
    clock,
    onRun: (job, result, report) => {
      metrics.maintenanceRuns.inc({ job, result });
      if (report && 'attempts' in report) {
        metrics.prunedRows.inc({ table: 'webhook_attempts' }, report.attempts);
        metrics.prunedRows.inc({ table: 'webhook_attempt_stats' }, report.attemptStats);
        metrics.prunedRows.inc({ table: 'webhooks' }, report.webhooks);
        metrics.prunedRows.inc({ table: 'entity_changes' }, report.entityChanges);
        for (const [table, rows] of Object.entries(report.expired)) metrics.prunedRows.inc({ table }, rows);
      }
      if (report && 'promoted' in report) {
        metrics.repairedGroups.inc({ action: 'promoted' }, report.promoted);
        metrics.repairedGroups.inc({ action: 'recounted' }, report.recounted);
      }
    },
  });
  const notifier = new OperatorNotifier({
    knex,
    logger,
    deliver: (request) => deliverer.deliver(request),
    openSecret: (sealed) => secrets.open(sealed),
    intervalMs: config.DISPATCHER_NOTIFY_INTERVAL,
    clock,
  });
  const server = createStatusServer({ health, metrics: () => metrics.registry.render() });

  const shutdown = async (): Promise<void> => {
    // stop taking work, finish what is in flight, write its results, then let go of everything
    const maintenanceStopped = maintenance.stop();
    const notifierStopped = notifier.stop();
    await loop.stop(config.DISPATCHER_SHUTDOWN_TIMEOUT);
    const abandoned = loop.active;
    if (abandoned > 0) {
      // their rows stay leased and are delivered again once the lease runs out (at-least-once)
      logger.warn({ abandoned }, 'deliveries still in flight at the shutdown deadline; left to their lease');
    }
    // close() waits for in-flight requests, which after the deadline we no longer do
    await Promise.race([
      deliverer.close(),
      new Promise<void>((resolve) => clock.setTimeout(resolve, abandoned > 0 ? 0 : 1000)),
    ]);
    await maintenanceStopped;
    await notifierStopped;
    await listener?.stop();
    if (server.listening) {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections(); // status requests are short; nothing worth waiting for
      });
    }
  };
  // stopping twice (a second signal, a test's cleanup) waits for the first stop
  let stopped: Promise<void> | undefined;

  const wake = (reason: 'notification' | 'listen', ids?: readonly number[]) => {
    logger.debug({ reason, ids }, 'wake-up');
    loop.wake(ids);
  };

  return {
    metrics,
    health,

    start() {
      listener = startListener({
        connectionString: config.DATABASE_URL,
        channel: WEBHOOK_DUE_CHANNEL,
        logger,
        onNotification: (payload) => {
          metrics.notifications.inc();
          if (payload === DELIVERIES_STOPPED_PAYLOAD) void loop.refreshStopped();
          // the rows an enqueue named: claimed by primary key while there is nothing else to claim
          wake('notification', parseDueIds(payload));
        },
        onListen: () => {
          // a `stopped` notification may have been lost while LISTEN was down
          void loop.refreshStopped();
          wake('listen');
        },
      });
      loop.start();
      maintenance.start();
      notifier.start();
      return new Promise((resolve, reject) => {
        // listening is the only step that fails (a port in use); main.ts exits on the rejection
        server.on('error', (error) => {
          logger.fatal({ err: error }, 'status server failed');
          reject(error);
        });
        server.listen(config.DISPATCHER_PORT, () => {
          const address = server.address() as AddressInfo;
          logger.info(
            { port: address.port },
            `dispatcher status on http://127.0.0.1:${address.port}/healthz`,
          );
          resolve(address);
        });
      });
    },

    stop() {
      stopped ??= shutdown();
      return stopped;
    },
  };
}
