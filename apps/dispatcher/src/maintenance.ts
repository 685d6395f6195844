import {
  FIRST_GROUP,
  findGroupsToRepair,
  ATTEMPT_STATS_RETENTION_MS,
  dropExpiredPartitions,
  ensurePartitions,
  PARTITIONED_TABLES,
  pgErrorCode,
  PgErrorCode,
  pruneAttemptStats,
  pruneExpired,
  EXPIRING_TABLES,
  type ExpiringTable,
  pruneWebhooksStep,
  repairGroups,
  type GroupCursor,
  type Knex,
  type PartitionPrune,
} from '@platform/db';
import { CronJob } from 'cron';
import pg from 'pg';
import type { Logger } from 'pino';
import { systemClock, type Clock } from './clock';

/** The maintenance jobs; each number is the second key of its advisory lock. */
export const MAINTENANCE_JOBS = { prune: 1, repair: 2 } as const;
export type MaintenanceJob = keyof typeof MAINTENANCE_JOBS;

/**
 * First key of the jobs' advisory locks (`pg_try_advisory_lock(int, int)`). The two-key form
 * lives in its own key space, apart from the one-key `hashtext(...)` locks the API takes.
 */
export const MAINTENANCE_LOCK_NAMESPACE = "hashtext('platform.dispatcher-maintenance')";

/** Application name of a job's lock connection, so operators can see who holds a job. */
export const MAINTENANCE_APPLICATION_NAME = 'platform-dispatcher-maintenance';

/** Rows one prune statement deletes (or looks at) at most. */
export const PRUNE_BATCH = 5_000;
/** Groups one repair statement looks at. */
export const REPAIR_BATCH = 500;

export interface PruneReport {
  /** Rows of the attempt partitions dropped (as the planner's statistics count them). */
  attempts: number;
  /** Rows of the per-minute attempt figures (kept ATTEMPT_STATS_RETENTION_MS). */
  attemptStats: number;
  /** Rows of rate-limit counts and of login tokens past their use (EXPIRING_TABLES), by table. */
  expired: Record<ExpiringTable, number>;
  webhooks: number;
  /** Rows of the change partitions dropped (as the planner's statistics count them). */
  entityChanges: number;
  partitions: {
    /** Partitions created ahead. */
    created: string[];
    dropped: string[];
    /** Expired partitions of changes that webhooks still reference, and how many (1,000 at most). */
    pinned: PartitionPrune['pinned'];
    /**
     * Expired partitions whose detach could not get its locks in time, and tables whose partitions
     * ahead could not be attached in time: tried again next run.
     */
    busy: string[];
  };
}

export interface RepairReport {
  /** Groups with a Pending webhook looked at. */
  examined: number;
  promoted: number;
  recounted: number;
}

export interface MaintenanceOptions {
  knex: Knex;
  /** For the lock connection of each run (a session of its own, see `withJobLock`). */
  connectionString: string;
  logger: Logger;
  pruneSchedule: string;
  repairSchedule: string;
  /** Finished webhooks go this long after completion. */
  webhookRetentionMs: number;
  /** Attempts go this long after they were recorded. */
  attemptRetentionMs: number;
  pruneBatch?: number;
  repairBatch?: number;
  /** Times each run for its log line; the system clock by default. */
  clock?: Clock;
  /** Told about every run: done (with its report), skipped (another replica holds it), failed. */
  onRun?(
    job: MaintenanceJob,
    result: 'done' | 'skipped' | 'failed',
    report?: PruneReport | RepairReport,
  ): void;
}

/**
 * The dispatcher's cron jobs (docs/dispatcher.md#prune-job, docs/dispatcher.md#repair-sweep): pruning what the retention lets go, and the repair
 * sweep that promotes the head of any group left without one. Every replica schedules both; a
 * session-level advisory lock per job lets one replica at a time run it, and the others skip
 * that tick. The lock lives on a connection of its own for the run, so a replica that dies
 * mid-run frees it with its connection; the job's statements use the pool and commit one by one.
 */
export class Maintenance {
  private readonly jobs: CronJob[] = [];
  private readonly running = new Set<Promise<unknown>>();
  private stopping = false;

  constructor(private readonly options: MaintenanceOptions) {}

  /** Schedules both jobs. */
  start(): void {
    const schedule = (job: MaintenanceJob, cronTime: string, run: () => Promise<unknown>) =>
      CronJob.from({
        cronTime,
        name: `dispatcher-${job}`,
        start: true,
        // a run still going at the next tick makes that tick a no-op in this process
        waitForCompletion: true,
        onTick: async () => {
          await this.track(run());
        },
      });
    this.jobs.push(
      schedule('prune', this.options.pruneSchedule, () => this.prune()),
      schedule('repair', this.options.repairSchedule, () => this.repair()),
    );
  }

  /** Stops scheduling; a run in progress ends after its current statement. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const job of this.jobs) void job.stop();
    await Promise.allSettled([...this.running]);
  }

  private track<T>(promise: Promise<T>): Promise<T> {
    this.running.add(promise);
    void promise.finally(() => this.running.delete(promise)).catch(() => {});
    return promise;
  }

  /** Runs the prune job now, unless another replica runs it; null when skipped. Never throws. */
  prune(): Promise<PruneReport | null> {
    return this.run('prune', () => this.pruneAll());
  }

  /** Runs the repair sweep now, unless another replica runs it; null when skipped. Never throws. */
  repair(): Promise<RepairReport | null> {
    return this.run('repair', () => this.repairAll());
  }

  private async run<T extends PruneReport | RepairReport>(
    job: MaintenanceJob,
    work: () => Promise<T>,
  ): Promise<T | null> {
    const { logger, onRun } = this.options;
    const clock = this.options.clock ?? systemClock;
    const started = clock.now();
    try {
      const report = await this.withJobLock(job, work);
      if (report === null) {
        logger.debug({ job }, 'maintenance skipped: another replica runs it');
        onRun?.(job, 'skipped');
        return null;
      }
      const repaired = 'promoted' in report && report.promoted + report.recounted > 0;
      // a repair that found work means a bug or a crash left a group behind: worth a warning; an
      // idle sweep every minute is not worth a line at info
      const level = repaired ? 'warn' : job === 'prune' ? 'info' : 'debug';
      logger[level]({ job, report, durationMs: clock.now() - started }, 'maintenance done');
      onRun?.(job, 'done', report);
      return report;
    } catch (error) {
      logger.error({ err: error, job }, 'maintenance failed');
      onRun?.(job, 'failed');
      return null;
    }
  }

  /**
   * Runs `work` while holding the job's advisory lock on a session of its own; null, without
   * running it, when another session holds the lock. Closing the connection releases the lock
   * even when unlocking fails.
   */
  private async withJobLock<T>(job: MaintenanceJob, work: () => Promise<T>): Promise<T | null> {
    const client = new pg.Client({
      connectionString: this.options.connectionString,
      application_name: MAINTENANCE_APPLICATION_NAME,
      connectionTimeoutMillis: 10_000,
    });
    // without a listener, an 'error' on an idle client (the server went away) crashes the process
    client.on('error', () => {});
    await client.connect();
    try {
      const { rows } = await client.query<{ locked: boolean }>(
        `select pg_try_advisory_lock(${MAINTENANCE_LOCK_NAMESPACE}, $1) as locked`,
        [MAINTENANCE_JOBS[job]],
      );
      if (!rows[0]?.locked) return null;
      return await work();
    } finally {
      await client.end().catch(() => {});
    }
  }

  /**
   * Partitions created ahead (and today's made the one new rows go to); finished webhooks, row by
   * row; then the partitions of attempts and of changes that are past their retention, changes
   * after webhooks so that the webhooks just pruned no longer pin them; then the per-minute figures; then rate-limit counts and login tokens past their use.
   */
  private async pruneAll(): Promise<PruneReport> {
    const { knex, attemptRetentionMs, webhookRetentionMs } = this.options;
    const batch = this.options.pruneBatch ?? PRUNE_BATCH;
    const report: PruneReport = {
      attempts: 0,
      attemptStats: 0,
      expired: { rate_limit_hits: 0, refresh_tokens: 0, mfa_login_tokens: 0 },
      webhooks: 0,
      entityChanges: 0,
      partitions: { created: [], dropped: [], pinned: [], busy: [] },
    };
    for (const table of PARTITIONED_TABLES) {
      try {
        report.partitions.created.push(...(await ensurePartitions(knex, table)));
      } catch (error) {
        // the days ahead leave the next runs time to make it
        if (pgErrorCode(error) !== PgErrorCode.LockNotAvailable) throw error;
        report.partitions.busy.push(table);
      }
    }
    report.webhooks = await this.walkWebhooks(webhookRetentionMs, batch);
    // a change is kept as long as its webhooks, so it shares their retention
    for (const [table, olderThanMs] of [
      ['webhook_attempts', attemptRetentionMs],
      ['entity_changes', webhookRetentionMs],
    ] as const) {
      if (this.stopping) break;
      const pruned = await dropExpiredPartitions(knex, table, { olderThanMs });
      const rows = pruned.dropped.reduce((sum, dropped) => sum + dropped.rows, 0);
      if (table === 'webhook_attempts') report.attempts = rows;
      else report.entityChanges = rows;
      report.partitions.dropped.push(...pruned.dropped.map((dropped) => dropped.partition));
      report.partitions.pinned.push(...pruned.pinned);
      report.partitions.busy.push(...pruned.busy);
    }
    while (!this.stopping) {
      const deleted = await pruneAttemptStats(knex, {
        olderThanMs: ATTEMPT_STATS_RETENTION_MS,
        limit: batch,
      });
      report.attemptStats += deleted;
      if (deleted < batch) break;
    }
    for (const table of Object.keys(EXPIRING_TABLES) as ExpiringTable[]) {
      while (!this.stopping) {
        const deleted = await pruneExpired(knex, table, { limit: batch });
        report.expired[table] += deleted;
        if (deleted < batch) break;
      }
    }
    return report;
  }

  /** Keyset steps over finished webhooks from the lowest id until one says the scan is over; answers the rows deleted. */
  private async walkWebhooks(olderThanMs: number, batch: number): Promise<number> {
    const { knex } = this.options;
    let deleted = 0;
    let after = 0;
    while (!this.stopping) {
      const result = await pruneWebhooksStep(knex, { olderThanMs, after, scan: batch });
      deleted += result.deleted;
      after = result.lastId;
      if (result.done) break;
    }
    return deleted;
  }

  private async repairAll(): Promise<RepairReport> {
    const { knex, logger } = this.options;
    const batch = this.options.repairBatch ?? REPAIR_BATCH;
    const report: RepairReport = { examined: 0, promoted: 0, recounted: 0 };
    let after: GroupCursor | null = FIRST_GROUP;
    while (after && !this.stopping) {
      const page = await findGroupsToRepair(knex, { after, limit: batch });
      report.examined += page.examined;
      after = page.next;
      if (page.groups.length === 0) continue;
      const repair = await repairGroups(knex, page.groups);
      for (const webhook of repair.promoted) {
        logger.warn(
          { webhookId: webhook.id, registrationId: webhook.registrationId, groupKey: webhook.groupKey },
          'repair: promoted the head of a stranded group',
        );
      }
      for (const group of repair.recounted) {
        logger.warn(group, 'repair: corrected the open count of a group');
      }
      report.promoted += repair.promoted.length;
      report.recounted += repair.recounted.length;
    }
    return report;
  }
}
