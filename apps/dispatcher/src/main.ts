import { join } from 'node:path';
import { createKnex, migrate, missingSessionSettings } from '@platform/db';
import { createSecretBox, loadSigningKey, resolvePrivateKeyPem, resolveSecretKey } from '@platform/crypto';
import { startTracing } from '@platform/tracing';
import { loadConfig } from './config';
import { createDispatcher } from './dispatcher';
import { createLogger } from './logger';

/** Wires config, database and keys, starts the dispatcher, and stops it cleanly on SIGTERM/SIGINT. */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger({ level: config.LOG_LEVEL, dispatcherId: config.DISPATCHER_ID });
  // off unless OTEL_EXPORTER_OTLP_ENDPOINT is set (docs/dispatcher.md › Tracing)
  const tracing = await startTracing({ serviceName: 'platform-dispatcher' });
  const knexOptions = {
    // claims and result writes (the loop), scrapes, and the statements of two maintenance jobs
    pool: { max: 10 },
    applicationName: 'platform-dispatcher',
    synchronousCommit: false,
  };
  const knex = createKnex(config.DATABASE_URL, knexOptions);
  // A dispatcher may start before anything else touched the database; the migration lock makes
  // this safe next to an API or other dispatchers doing the same.
  await migrate(knex);
  const missing = await missingSessionSettings(knex, knexOptions);
  if (missing.length > 0) {
    logger.warn(
      { missing },
      'session settings not in effect (a pooler dropped them?): set them on the role, see docs/dispatcher.md › Behind PgBouncer',
    );
  }
  const production = config.NODE_ENV === 'production';
  const secrets = createSecretBox(
    resolveSecretKey({
      key: config.SECRET_ENCRYPTION_KEY,
      file: config.SECRET_ENCRYPTION_KEY_FILE ?? join(config.DATA_DIR, 'keys', 'secret.key'),
      production,
    }),
  );
  const signingKey = await loadSigningKey(
    resolvePrivateKeyPem({
      pem: config.JWT_PRIVATE_KEY,
      file: config.JWT_PRIVATE_KEY_FILE ?? join(config.DATA_DIR, 'keys', 'jwt-private.pem'),
      production,
    }),
  );
  const dispatcher = createDispatcher({ config, knex, logger, secrets, signingKey });
  const started = dispatcher.start();

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    setTimeout(() => {
      logger.error('did not stop within the deadline; exiting');
      process.exit(1);
    }, config.DISPATCHER_SHUTDOWN_TIMEOUT + 10_000).unref();
    await dispatcher.stop();
    await knex.destroy();
    await tracing?.shutdown();
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  // start() logged why; a dispatcher without its status port is not one to keep running
  await started.catch(() => process.exit(1));
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
