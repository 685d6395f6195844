import { CLAIM_SQL } from '../src/queue/claim';
import { ENQUEUE_STATEMENTS } from '../src/queue/enqueue';
import { PRUNE_ATTEMPT_STATS_SQL, PRUNE_WEBHOOKS_STEP_SQL } from '../src/queue/prune';
import { RELEASE_CLAIMS_SQL } from '../src/queue/release-claims';

/**
 * The statements of the queue's hot paths that its TypeScript sends itself (with knex's bindings),
 * besides the bare calls of its functions (`packages/db/src/queue/functions/`): what the Citus lint
 * (`citus-lint.test.ts`, docs/scaling.md › The lint) reads, with every function body.
 */
export const HOT_STATEMENTS: readonly { name: string; sql: string }[] = [
  { name: 'claim', sql: CLAIM_SQL },
  { name: 'enqueue', sql: ENQUEUE_STATEMENTS.enqueue },
  { name: 'enqueue (traced)', sql: ENQUEUE_STATEMENTS.traced },
  { name: 'replay', sql: ENQUEUE_STATEMENTS.replay },
  { name: 'release claims', sql: RELEASE_CLAIMS_SQL },
  { name: 'prune webhooks', sql: PRUNE_WEBHOOKS_STEP_SQL },
  { name: 'prune attempt stats', sql: PRUNE_ATTEMPT_STATS_SQL },
];
