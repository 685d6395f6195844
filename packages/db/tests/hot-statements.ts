import { CLAIM_NOTIFIED_STATEMENT, CLAIM_STATEMENT } from '../src/queue/claim';
import { COMPLETE_STATEMENT } from '../src/queue/complete';
import { ENQUEUE_STATEMENTS } from '../src/queue/enqueue';
import { OPERATOR_APPLY_SQL } from '../src/queue/operator-apply';
import { DETACH_PARTITION_SQL, PRUNE_ATTEMPT_STATS_SQL, PRUNE_WEBHOOKS_STEP_SQL } from '../src/queue/prune';
import { RELEASE_CLAIMS_SQL } from '../src/queue/release-claims';
import { RELEASE_GROUPS_SQL } from '../src/queue/release-groups';

/**
 * The statements of the queue's hot paths that its TypeScript sends itself (with knex's bindings, or positional ones for the prepared statements):
 * the calls of its functions (`packages/db/src/queue/functions/`), which R1 wants bare, the
 * statements of their own, and the partition job's detach (R9): what the Citus lint
 * (`citus-lint.test.ts`, docs/scaling.md › The lint) reads, with every function body.
 */
export const HOT_STATEMENTS: readonly { name: string; sql: string }[] = [
  { name: 'claim', sql: CLAIM_STATEMENT.text },
  { name: 'claim notified', sql: CLAIM_NOTIFIED_STATEMENT.text },
  { name: 'enqueue', sql: ENQUEUE_STATEMENTS.enqueue },
  { name: 'enqueue (traced)', sql: ENQUEUE_STATEMENTS.traced },
  { name: 'replay', sql: ENQUEUE_STATEMENTS.replay },
  { name: 'complete', sql: COMPLETE_STATEMENT.text },
  { name: 'operator apply', sql: OPERATOR_APPLY_SQL },
  { name: 'release groups', sql: RELEASE_GROUPS_SQL },
  { name: 'release claims', sql: RELEASE_CLAIMS_SQL },
  { name: 'prune webhooks', sql: PRUNE_WEBHOOKS_STEP_SQL },
  { name: 'prune attempt stats', sql: PRUNE_ATTEMPT_STATS_SQL },
  { name: 'detach partition', sql: DETACH_PARTITION_SQL.concurrently },
  { name: 'detach partition (finish)', sql: DETACH_PARTITION_SQL.finalize },
];
