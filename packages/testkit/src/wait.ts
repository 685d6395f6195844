import type { Knex } from '@platform/db';

/** What `eventually` can watch besides its condition: a child process that must stay alive. */
export interface Watched {
  /** Answers why waiting is pointless (the process exited), or undefined while it is not. */
  gone(): string | undefined;
}

/**
 * Polls `check` until it returns true, failing with `what` after `timeoutMs`; a check that throws
 * counts as false. With `watch`, fails as soon as the watched process has gone.
 */
export async function eventually(
  check: () => Promise<boolean> | boolean,
  options: { timeoutMs?: number; what?: string; watch?: Watched } = {},
): Promise<void> {
  const { timeoutMs = 20_000, what = 'condition', watch } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (
      await Promise.resolve()
        .then(check)
        .catch(() => false)
    )
      return;
    const gone = watch?.gone();
    if (gone !== undefined) throw new Error(`${what}: ${gone}`);
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Resolves once a session of `knex`'s database waits for a lock: the moment a statement is
 * really blocked, which a test can act on instead of sleeping and hoping it is.
 */
export async function waitForLockWaiter(knex: Knex, timeoutMs = 5_000): Promise<void> {
  await eventually(
    async () => {
      const { rows } = (await knex.raw(
        `select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
      )) as { rows: unknown[] };
      return rows.length > 0;
    },
    { timeoutMs, what: 'a session waiting for a lock' },
  );
}
