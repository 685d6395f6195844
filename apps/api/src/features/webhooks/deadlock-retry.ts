import { pgErrorCode } from '@platform/db';

export const DEADLOCK_DETECTED = '40P01';
const ATTEMPTS = 3;

/**
 * Runs the transaction `work` again when Postgres broke a deadlock by aborting it. Webhook rows
 * and their group rows are locked by producers, releasers, operators and dispatchers; each takes
 * them in a deliberate order, but not every pair of orders can agree, so a rare deadlock is
 * retried rather than answered with a 500.
 */
export async function retryOnDeadlock<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (pgErrorCode(error) !== DEADLOCK_DETECTED || attempt >= ATTEMPTS) throw error;
    }
  }
}
