import { randomUUID } from 'node:crypto';
import type { OperationSkipReason, WebhookOperationAction } from '@platform/shared';
import { pgErrorCode, type Knex } from '@platform/db';
import type { Logger } from 'pino';
import type { Principal } from '../../auth/principal';
import { AppError, fieldError } from '../../http/errors';
import type { Operations } from '../../deps';
import { recordOperatorAction, type OperatorActionRecord } from '../operator-actions/operator-action-service';
import { DEADLOCK_DETECTED, retryOnDeadlock } from '../webhooks/deadlock-retry';
import type { BatchResult, OperationKind, OperationRow } from './operation-kinds';
import { replayKind } from './replay-kind';
import { bulkKind, recoverKind } from './webhook-kinds';

/** Every action's kind: what it selects and what a batch does. */
const OPERATION_KINDS: Partial<Record<WebhookOperationAction, OperationKind>> = {
  retry: bulkKind('retry'),
  abort: bulkKind('abort'),
  resolve: bulkKind('resolve'),
  recover: recoverKind,
  replay: replayKind,
};

export interface OperationRunnerOptions {
  knex: Knex;
  logger: Logger;
  now: () => Date;
  /** Items per batch (one transaction each). */
  batchSize?: number;
  /** How long a runner owns an operation without finishing a batch before another may take it over. */
  leaseMs?: number;
  /**
   * Batches this process runs at once, across all its operations (each one transaction on its own
   * connection). Operations take turns batch by batch, so a small one started behind a huge one
   * finishes after a few batches, and however many run, they hold at most this many of the API's
   * database connections: requests keep the rest.
   */
  concurrentBatches?: number;
  /** How often to look for operations whose runner went away (0: never; tests kick instead). */
  pollMs?: number;
}

export interface NewOperation {
  action: WebhookOperationAction;
  registrationId?: number | null;
  filter: Record<string, unknown>;
  dryRun?: boolean;
  freshSchedule?: boolean;
  /** Act on the selection of this finished dry run (`fromDryRun`) instead of selecting anew. */
  fromDryRun?: number;
  audit: OperatorActionRecord['action'];
}

/** How long a finished dry run keeps its selection for the real run that confirms it. */
const DRY_RUN_SELECTION_KEPT = '1 hour';

/**
 * Moves the selection of dry run `fromId` to `operation` (the real run the operator confirmed
 * with its count), so the real run acts on exactly those rows. The dry run must be the caller's
 * party's, finished, of the same action and registration; it lends its selection once (moved, not
 * copied). Returns how many rows.
 */
async function takeDryRunSelection(
  trx: Knex.Transaction,
  operation: OperationRow,
  fromId: number,
  principal: Principal,
): Promise<number> {
  const dry = (await trx('webhook_operations').where({ id: fromId }).forUpdate().first()) as
    (OperationRow & { principal: { partyId: number } }) | undefined;
  if (!dry || dry.principal.partyId !== principal.partyId) {
    throw new AppError('NotFound', `Dry run ${fromId} was not found`);
  }
  if (!dry.dry_run) throw fieldError('fromDryRun', `operation ${fromId} is not a dry run`);
  if (dry.action !== operation.action || dry.registration_id !== operation.registration_id) {
    throw fieldError('fromDryRun', `dry run ${fromId} counted another action or registration`);
  }
  if (dry.state !== 'done') {
    throw new AppError('Conflict', `Dry run ${fromId} has not finished counting; wait for it, then confirm.`);
  }
  const moved = await trx.raw(
    `with taken as (delete from webhook_operation_items where operation_id = ? returning item_id)
     insert into webhook_operation_items (operation_id, item_id) select ?, item_id from taken`,
    [fromId, operation.id],
  );
  const count = (moved as { rowCount: number }).rowCount;
  if (count === 0 && dry.total > 0) {
    throw new AppError(
      'Conflict',
      `Dry run ${fromId} no longer holds its selection (it was confirmed already, or is older than ` +
        `${DRY_RUN_SELECTION_KEPT}); count again.`,
    );
  }
  return count;
}

const DEFAULT_BATCH = 500;
const DEFAULT_LEASE_MS = 30_000;
const DEFAULT_POLL_MS = 10_000;
const DEFAULT_CONCURRENT_BATCHES = 2;
/** Rounds of `retryOnDeadlock` a batch gets before its operation is marked failed. */
const MAX_DEADLOCK_ROUNDS = 10;

/** Sums two skip counts. */
function addSkipped(
  into: Partial<Record<OperationSkipReason, number>>,
  more: Partial<Record<OperationSkipReason, number>>,
): Partial<Record<OperationSkipReason, number>> {
  const sum = { ...into };
  for (const [reason, count] of Object.entries(more) as [OperationSkipReason, number][]) {
    sum[reason] = (sum[reason] ?? 0) + count;
  }
  return sum;
}

/** A dry run applies a batch inside a savepoint it rolls back: the same rules, nothing changed. */
class DryRunRollback extends Error {
  constructor(readonly result: BatchResult) {
    super('dry run');
  }
}

function kindOf(action: WebhookOperationAction): OperationKind {
  const kind = OPERATION_KINDS[action];
  if (!kind) throw new Error(`no operation kind for ${action}`);
  return kind;
}

/**
 * Creates an operation in `trx`, leased to `runner`: its audit row, its row, and its items,
 * selected in the caller's scope. Returns the operation; `runner.kick` it once `trx` has committed.
 */
export async function createOperation(
  trx: Knex.Transaction,
  runner: Pick<Operations, 'id' | 'leaseMs'>,
  principal: Principal,
  request: NewOperation,
): Promise<OperationRow> {
  const kind = kindOf(request.action);
  const auditId = await recordOperatorAction(trx, principal, {
    action: request.audit,
    registrationId: request.registrationId ?? null,
    filter: request.filter,
    dryRun: request.dryRun ?? false,
    changed: null,
    ...(request.fromDryRun !== undefined && { detail: { fromDryRun: request.fromDryRun } }),
  });
  const [operation] = (await trx('webhook_operations')
    .insert({
      action: request.action,
      dry_run: request.dryRun ?? false,
      fresh_schedule: request.freshSchedule ?? false,
      registration_id: request.registrationId ?? null,
      // the registration's tenant bucket, which its batches pin (docs/scaling.md, R2)
      bucket:
        request.registrationId === undefined
          ? null
          : trx('webhook_registrations').where({ id: request.registrationId }).select('bucket'),
      filter: JSON.stringify(request.filter),
      requested_by_account_id: principal.accountId === 0 ? null : principal.accountId,
      principal: JSON.stringify({ accountId: principal.accountId, partyId: principal.partyId }),
      audit_id: auditId,
      runner: runner.id,
      lease_until: trx.raw(`now() + make_interval(secs => ?)`, [runner.leaseMs / 1000]),
    })
    .returning('*')) as OperationRow[];
  // dry runs keep their selection for the real run for a while (takeDryRunSelection); older ones go
  await trx.raw(
    `delete from webhook_operation_items i using webhook_operations o
      where i.operation_id = o.id and o.dry_run and o.state <> 'running'
        and o.finished_at < now() - interval '${DRY_RUN_SELECTION_KEPT}'`,
  );
  const total =
    request.fromDryRun === undefined
      ? await kind.select(trx, operation!, principal)
      : await takeDryRunSelection(trx, operation!, request.fromDryRun, principal);
  await trx('operator_actions').where({ id: auditId }).update({ operation_id: operation!.id });
  const [counted] = (await trx('webhook_operations')
    .where({ id: operation!.id })
    .update({ total })
    .returning('*')) as OperationRow[];
  return counted!;
}

/**
 * Runs bulk actions, recovers and replays (docs/operator-recovery.md). An operation is created with
 * the items it acts on (`createOperation`, in the request's transaction); then batches run in this API
 * process, each one transaction that applies the next items after the cursor and moves the cursor
 * and the counters with them, so a crash loses at most the batch in flight, which rolls back whole:
 * no webhook is ever half-changed. A runner holds an operation by a lease it renews with every
 * batch; an operation whose lease ran out (its API process died or stopped) is resumed by whichever
 * API process looks next. Running the same request twice is safe: the state rules skip what the
 * first one changed.
 */
export class OperationRunner implements Operations {
  readonly id = `api-${randomUUID()}`;
  readonly leaseMs: number;
  private readonly batchSize: number;
  private readonly running = new Map<number, Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Free batch slots, and the operations waiting for one, first come first served. */
  private freeSlots: number;
  private readonly waiting: (() => void)[] = [];
  private inFlight = 0;
  /** The most batches that ran at once (for tests). */
  maxInFlight = 0;

  constructor(private readonly options: OperationRunnerOptions) {
    this.batchSize = options.batchSize ?? DEFAULT_BATCH;
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.freeSlots = options.concurrentBatches ?? DEFAULT_CONCURRENT_BATCHES;
  }

  /** Starts looking for orphaned operations now and every `pollMs`. */
  start(): void {
    const pollMs = this.options.pollMs ?? DEFAULT_POLL_MS;
    void this.resumeOrphans();
    if (pollMs > 0) {
      this.timer = setInterval(() => void this.resumeOrphans(), pollMs);
      this.timer.unref();
    }
  }

  /** Stops taking batches; waits for the ones in flight. Unfinished operations resume elsewhere. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.idle();
    // hand what is left over at once: the next runner to look resumes it without waiting
    await this.options
      .knex('webhook_operations')
      .where({ state: 'running', runner: this.id })
      .update({ lease_until: this.options.knex.fn.now() })
      .catch((error: unknown) => this.options.logger.error({ err: error }, 'releasing operations failed'));
  }

  /** Resolves when this runner has no operation in hand. */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running.values()]);
  }

  /** Runs an operation this runner holds (just created) in the background. */
  kick(id: number): void {
    if (this.stopped || this.running.has(id)) return;
    const run = this.run(id)
      .catch((error: unknown) =>
        this.options.logger.error({ err: error, operationId: id }, 'operation failed'),
      )
      .finally(() => this.running.delete(id));
    this.running.set(id, run);
  }

  /** Takes over the running operations whose lease ran out, and runs them. */
  async resumeOrphans(): Promise<void> {
    if (this.stopped) return;
    try {
      const taken = (await this.options
        .knex('webhook_operations')
        .where({ state: 'running' })
        .where('lease_until', '<', this.options.knex.fn.now())
        .update({
          runner: this.id,
          lease_until: this.options.knex.raw(`now() + make_interval(secs => ?)`, [this.leaseMs / 1000]),
        })
        .returning('id')) as { id: number }[];
      for (const { id } of taken) {
        this.options.logger.info({ operationId: id }, 'resuming an operation whose runner went away');
        this.kick(id);
      }
    } catch (error) {
      this.options.logger.error({ err: error }, 'looking for orphaned operations failed');
    }
  }

  /**
   * Runs one batch in a free slot, waiting in line for one when all are taken. A batch done, the
   * operation queues again behind the others: the operations running here take turns.
   */
  private async inSlot<T>(batch: () => Promise<T>): Promise<T> {
    if (this.freeSlots > 0) this.freeSlots--;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.maxInFlight = Math.max(this.maxInFlight, ++this.inFlight);
    try {
      return await batch();
    } finally {
      this.inFlight--;
      const next = this.waiting.shift();
      // the slot passes straight to the next in line, or is freed
      if (next) next();
      else this.freeSlots++;
    }
  }

  private async run(id: number): Promise<void> {
    let deadlocks = 0;
    while (!this.stopped) {
      let more: boolean;
      try {
        more = await this.inSlot(() => retryOnDeadlock(() => this.batch(id)));
        deadlocks = 0;
      } catch (error) {
        // a batch locks many rows that dispatchers lock in another order: a deadlock is retried
        // after a pause (the batch rolled back whole), not taken for a failure
        if (pgErrorCode(error) === DEADLOCK_DETECTED && ++deadlocks < MAX_DEADLOCK_ROUNDS) {
          await new Promise((resolve) => setTimeout(resolve, 50 * deadlocks));
          continue;
        }
        await this.fail(id, error);
        throw error;
      }
      if (!more) return;
    }
  }

  /**
   * One batch, one transaction: the operation row locked (it must still be ours and running), the
   * next items after the cursor applied, the counters and the cursor moved, the lease renewed.
   * When no item is left, the operation is done, its items dropped and its audit row completed.
   * Returns whether there may be more.
   */
  private batch(id: number): Promise<boolean> {
    return this.options.knex.transaction(async (trx) => {
      const operation = (await trx('webhook_operations')
        .where({ id, state: 'running', runner: this.id })
        .forUpdate()
        .first()) as OperationRow | undefined;
      if (!operation) return false; // finished, failed, or taken over by another runner
      const items = (
        (await trx('webhook_operation_items')
          .where({ operation_id: id })
          .where('item_id', '>', operation.cursor)
          .orderBy('item_id')
          .limit(this.batchSize)
          .pluck('item_id')) as (number | string)[]
      ).map(Number);
      if (items.length === 0) {
        // a dry run keeps its selection: the real run that confirms it acts on exactly these rows
        if (!operation.dry_run) await trx('webhook_operation_items').where({ operation_id: id }).delete();
        await trx('webhook_operations')
          .where({ id })
          .update({ state: 'done', finished_at: trx.fn.now(), runner: null, lease_until: null });
        if (operation.audit_id !== null) {
          await trx('operator_actions')
            .where({ id: operation.audit_id })
            .update({ changed: operation.changed });
        }
        return false;
      }
      const result = await this.apply(trx, operation, items);
      await trx('webhook_operations')
        .where({ id })
        .update({
          cursor: items[items.length - 1],
          done: operation.done + items.length,
          changed: operation.changed + result.changed,
          skipped: JSON.stringify(addSkipped(operation.skipped, result.skipped)),
          lease_until: trx.raw(`now() + make_interval(secs => ?)`, [this.leaseMs / 1000]),
        });
      return true;
    });
  }

  private async apply(trx: Knex.Transaction, operation: OperationRow, items: number[]): Promise<BatchResult> {
    const kind = kindOf(operation.action);
    const now = this.options.now();
    if (!operation.dry_run) return kind.apply(trx, operation, items, now);
    try {
      await trx.transaction(async (savepoint) => {
        throw new DryRunRollback(await kind.apply(savepoint, operation, items, now));
      });
    } catch (error) {
      if (error instanceof DryRunRollback) return error.result;
      throw error;
    }
    throw new Error('unreachable');
  }

  /** Marks an operation failed, with why; what its finished batches did stays done. */
  private async fail(id: number, error: unknown): Promise<void> {
    const message = error instanceof Error ? error.message : String(error);
    try {
      await this.options
        .knex('webhook_operations')
        .where({ id, state: 'running', runner: this.id })
        .update({
          state: 'failed',
          error: message.slice(0, 1000),
          finished_at: this.options.knex.fn.now(),
          runner: null,
          lease_until: null,
        });
    } catch (failure) {
      this.options.logger.error({ err: failure, operationId: id }, 'recording an operation failure failed');
    }
  }
}
