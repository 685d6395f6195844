import { join } from 'node:path';
import { createKnex, missingSessionSettings } from '@platform/db';
import { createSecretBox, loadSigningKey, resolvePrivateKeyPem, resolveSecretKey } from '@platform/crypto';
import { startTracing } from '@platform/tracing';
import pino from 'pino';
import { createApp } from './app';
import { TokenService } from './auth/tokens';
import { loadConfig } from './config';
import { OperationRunner } from './features/webhook-operations/operation-runner';

/** Wires config, database and keys, listens, and shuts down cleanly on SIGTERM/SIGINT. */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = pino({ level: config.LOG_LEVEL, base: { service: 'api' } });
  // off unless OTEL_EXPORTER_OTLP_ENDPOINT is set (docs/dispatcher.md › Tracing)
  const tracing = await startTracing({ serviceName: 'platform-api' });
  const knex = createKnex(config.DATABASE_URL, {
    pool: { max: config.DB_POOL_MAX },
    applicationName: 'platform-api',
  });
  // in the background: the API starts whether or not the database answers yet
  void missingSessionSettings(knex).then(
    (missing) => {
      if (missing.length > 0)
        logger.warn(
          { missing },
          'session settings not in effect (a pooler dropped them?): set them on the role, see docs/dispatcher.md › Behind PgBouncer',
        );
    },
    () => {},
  );
  const now = () => new Date();
  const pem = resolvePrivateKeyPem({
    pem: config.JWT_PRIVATE_KEY,
    file: config.JWT_PRIVATE_KEY_FILE ?? join(config.DATA_DIR, 'keys', 'jwt-private.pem'),
    production: config.NODE_ENV === 'production',
  });
  const tokens = new TokenService(await loadSigningKey(pem), {
    issuer: config.JWT_ISSUER,
    audience: config.JWT_AUDIENCE,
    accessTtlMs: config.ACCESS_TOKEN_TTL,
    refreshTtlMs: config.REFRESH_TOKEN_TTL,
    now,
  });
  const secrets = createSecretBox(
    resolveSecretKey({
      key: config.SECRET_ENCRYPTION_KEY,
      file: config.SECRET_ENCRYPTION_KEY_FILE ?? join(config.DATA_DIR, 'keys', 'secret.key'),
      production: config.NODE_ENV === 'production',
    }),
  );
  const operations = new OperationRunner({
    knex,
    logger,
    now,
    batchSize: config.WEBHOOK_OPERATION_BATCH,
    leaseMs: config.WEBHOOK_OPERATION_LEASE,
  });
  operations.start();
  const app = createApp({ config, knex, logger, tokens, secrets, now, operations });
  const server = app.listen(config.API_PORT, config.API_HOST, () => {
    logger.info({ port: config.API_PORT }, `API listening on http://127.0.0.1:${config.API_PORT}`);
  });

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    const deadline = setTimeout(() => process.exit(1), 10_000).unref();
    server.close(async () => {
      await operations.stop();
      await knex.destroy();
      await tracing?.shutdown();
      clearTimeout(deadline);
      logger.info('stopped');
      process.exit(0);
    });
    server.closeIdleConnections();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
