import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@platform/testkit';
import {
  type CitusCatalog,
  type CitusRule,
  lintCatalog,
  lintCitus,
  loadCitusLint,
  type LintOptions,
  readCitusCatalog,
  TABLE_PLACEMENT,
} from '../tests/citus-lint';
import { DATABASE_FUNCTIONS } from './queue/functions/index';
import { HOT_STATEMENTS } from '../tests/hot-statements';

let db: TestDatabase;
let catalog: CitusCatalog;
let options: LintOptions;

beforeAll(async () => {
  await loadCitusLint();
  db = await createTestDatabase();
  catalog = await readCitusCatalog(db.knex);
  options = {
    volatility: catalog.volatility,
    sequences: catalog.sequences,
    oneNodeFunctions: new Set(['webhooks_complete']),
  };
});

afterAll(async () => {
  await db?.drop();
});

const rulesOf = (sql: string, ...functions: string[]): CitusRule[] =>
  lintCitus([{ name: 'case', sql }, ...functions.map((f) => ({ name: 'helper', sql: f }))], options).map(
    (v) => v.rule,
  );

/**
 * What the queue's SQL and schema still hold that Citus refuses, each waiting for its step of
 * docs/scaling.md › From one database to Citus (`detail`: a text the violation's detail holds,
 * when one unit may break a rule in more than one place). A violation fixed must leave this list too.
 */
const KNOWN: { unit: string; rule: CitusRule; detail?: string; why: string }[] = [
  {
    unit: 'webhooks_enqueue',
    rule: 'worker-sequence',
    detail: 'INSERT into entity_changes',
    why: 'the change id from entity_changes_id_seq: step 3, queue_next_id',
  },
  {
    unit: 'webhooks_enqueue',
    rule: 'worker-sequence',
    detail: 'INSERT into webhooks',
    why: 'the webhook id from webhooks_id_seq: step 3, queue_next_id',
  },
  {
    unit: 'webhooks_complete',
    rule: 'worker-sequence',
    detail: 'INSERT into webhook_attempts',
    why: 'the attempt id from webhook_attempts_id_seq: step 3, queue_next_id',
  },
  {
    unit: 'webhook_registrations_target',
    rule: 'worker-sequence',
    detail: 'INSERT into webhook_targets',
    why: 'the trigger inserts the endpoint (an int serial): it goes at step 2 (R8), the registration write inserts it on the coordinator',
  },
  {
    unit: 'webhook_registrations',
    rule: 'distributed-trigger',
    detail: 'webhook_registrations_target',
    why: "sets the registration's endpoint: dropped at step 2, the registration write sets it",
  },
  {
    unit: 'webhook_registrations',
    rule: 'distributed-trigger',
    detail: 'webhook_targets_rate_limit',
    why: "keeps the endpoint's rate limit: dropped at step 2, the registration write sets it",
  },
  {
    unit: 'detach partition',
    rule: 'concurrent-detach',
    why: 'on one database the retention detaches concurrently (a plain detach locks webhook_attempts): step 9 switches it',
  },
  {
    unit: 'detach partition (finish)',
    rule: 'concurrent-detach',
    why: 'finishes an interrupted concurrent detach: goes with it',
  },
  {
    unit: 'operator_actions',
    rule: 'key-across-placements',
    detail: 'operator_actions_registration_id_fkey',
    why: "a reference table's key to webhook_registrations: dropped at step 2, the column stays",
  },
  {
    unit: 'webhook_operations',
    rule: 'key-across-placements',
    detail: 'webhook_operations_registration_id_fkey',
    why: "a reference table's key to webhook_registrations: dropped at step 2, the column stays",
  },
];

const isKnown = (k: (typeof KNOWN)[number], v: { unit: string; rule: CitusRule; detail: string }) =>
  k.unit === v.unit && k.rule === v.rule && (k.detail === undefined || v.detail.includes(k.detail));

describe('the queue SQL and schema Citus would run', () => {
  it('holds none of the constructs Citus refuses but the KNOWN ones (docs/scaling.md › The lint)', () => {
    const units = [
      ...DATABASE_FUNCTIONS.map((sql) => ({ name: /function (\w+)/.exec(sql)![1]!, sql })),
      ...HOT_STATEMENTS,
    ];
    const violations = [...lintCitus(units, options), ...lintCatalog(catalog)];
    const unknown = violations
      .filter((v) => !KNOWN.some((k) => isKnown(k, v)))
      .map((v) => `${v.unit}: ${v.rule}: ${v.detail}\n    in ${v.statement}`);
    expect(unknown).toEqual([]);
    // a violation fixed leaves KNOWN too
    expect(KNOWN.filter((k) => !violations.some((v) => isKnown(k, v)))).toEqual([]);
  });

  it('places every table of the schema, and no table it does not have (docs/scaling.md › Where every table goes)', () => {
    expect(catalog.tables.filter((t) => !(t in TABLE_PLACEMENT)).sort()).toEqual([]);
    expect(Object.keys(TABLE_PLACEMENT).filter((t) => !catalog.tables.includes(t))).toEqual([]);
  });
});

describe('each rule', () => {
  it('bare-call: a queue function over tables is called as `select f(...)` or `select ... from f(...)` alone', () => {
    const reader = `create function reads(p_ids bigint[]) returns setof bigint language sql as $$
      select w.id from webhooks w where w.id = any(p_ids) $$`;
    expect(rulesOf(`with ids as (select $1::bigint[] as a) select reads(a) from ids`, reader)).toEqual([
      'bare-call',
    ]);
    expect(rulesOf(`select id from reads($1::bigint[]) as id where id > 10`, reader)).toEqual(['bare-call']);
    expect(rulesOf(`select count(*) from reads($1::bigint[])`, reader)).toEqual(['bare-call']);
    expect(rulesOf(`select reads($1::bigint[]), reads($2::bigint[])`, reader)).toEqual(['bare-call']);
    expect(rulesOf(`select reads(array[$1::bigint, $2::bigint])`, reader)).toEqual(['bare-call']);
    expect(rulesOf(`select reads(p_ids => $1::bigint[]) as ids`, reader)).toEqual([]);
    expect(rulesOf(`select id from reads($1::bigint[]) as id`, reader)).toEqual([]);
    // a statement calling no function over tables is a router statement, not a call (R2's)
    expect(rulesOf(`select id from webhooks where id = $1`, reader)).toEqual([]);
  });

  it('worker-sequence: a function numbering its rows from an int serial or a bigint one', () => {
    const fn = (body: string) =>
      `create function f(p_id int) returns void language plpgsql as $$ begin ${body} end $$`;
    expect(
      rulesOf(fn(`insert into webhook_events (registration_id, entity_name, type) values (p_id, 'x', 1);`)),
    ).toEqual(['worker-sequence']);
    expect(rulesOf(fn(`insert into webhooks (id, registration_id) values (default, p_id);`))).toEqual([
      'worker-sequence',
    ]);
    expect(rulesOf(fn(`perform nextval('webhooks_id_seq');`))).toEqual(['worker-sequence']);
    expect(
      rulesOf(fn(`insert into webhooks (id, registration_id) values (queue_next_id('webhooks'), p_id);`)),
    ).toEqual([]);
    expect(
      rulesOf(
        fn(`insert into mail_outbox (to_address, subject, text_body, kind) values ('a', 'b', 'c', 'd');`),
      ),
    ).toEqual([]);
    expect(
      rulesOf(fn(`insert into webhook_groups (registration_id, group_key) values (p_id, 'k');`)),
    ).toEqual([]);
    // a statement sent to the coordinator takes its id there
    expect(
      rulesOf(`insert into webhook_events (registration_id, entity_name, type) values ($1, 'x', 1)`),
    ).toEqual([]);
  });

  it('concurrent-detach: DETACH PARTITION ... CONCURRENTLY or FINALIZE', () => {
    expect(rulesOf(`alter table webhook_attempts detach partition webhook_attempts_p1 concurrently`)).toEqual(
      ['concurrent-detach'],
    );
    expect(rulesOf(`alter table webhook_attempts detach partition webhook_attempts_p1 finalize`)).toEqual([
      'concurrent-detach',
    ]);
    expect(rulesOf(`alter table webhook_attempts detach partition webhook_attempts_p1`)).toEqual([]);
  });

  /** The catalog's violations for what `ddl` creates (each named `example_…`), in a transaction rolled back. */
  const catalogRulesOf = async (ddl: string): Promise<CitusRule[]> => {
    const trx = await db.knex.transaction();
    try {
      await trx.raw(ddl);
      return lintCatalog(await readCitusCatalog(trx))
        .filter((v) => v.detail.includes('example_'))
        .map((v) => v.rule);
    } finally {
      await trx.rollback();
    }
  };

  it('distributed-trigger: a trigger on a distributed or reference table', async () => {
    const trigger = (table: string) =>
      `create trigger example_${table} before update on ${table}
         for each row execute function webhook_registrations_target()`;
    expect(await catalogRulesOf(trigger('webhooks'))).toEqual(['distributed-trigger']);
    expect(await catalogRulesOf(trigger('parties'))).toEqual(['distributed-trigger']);
    expect(await catalogRulesOf(trigger('refresh_tokens'))).toEqual([]);
  });

  it('key-action-on-bucket: SET NULL, SET DEFAULT or ON UPDATE CASCADE on a key between distributed tables', async () => {
    const key = (action: string) =>
      `alter table webhook_events add constraint example_key foreign key (registration_id)
         references webhook_registrations (id) ${action}`;
    expect(await catalogRulesOf(key('on delete set null'))).toEqual(['key-action-on-bucket']);
    expect(await catalogRulesOf(key('on update cascade'))).toEqual(['key-action-on-bucket']);
    expect(await catalogRulesOf(key('on delete cascade'))).toEqual([]);
    // to a reference table, without the bucket in the key (webhooks.last_action_id)
    expect(
      await catalogRulesOf(`alter table webhook_events add constraint example_key foreign key (registration_id)
                              references parties (id) on delete set null`),
    ).toEqual([]);
  });

  it('key-across-placements: a key to a distributed table from another placement, or to a local one', async () => {
    expect(
      await catalogRulesOf(`alter table parties add column example_id int
                              constraint example_key references webhook_registrations (id)`),
    ).toEqual(['key-across-placements']);
    expect(
      await catalogRulesOf(`alter table webhooks add column example_id int
                              constraint example_key references mfa_recovery_codes (id)`),
    ).toEqual(['key-across-placements']);
    expect(
      await catalogRulesOf(`alter table webhooks add column example_id int
                              constraint example_key references accounts (id)`),
    ).toEqual([]);
  });

  it('nested-distributed-query: a function that reads a table, called from a statement over a table', () => {
    const reader = `create function reads(p_ids bigint[]) returns json language sql as $$
      select json_agg(w) from webhooks w where w.id = any(p_ids) $$`;
    expect(
      rulesOf(
        `with chosen as (select id from webhooks limit 5) select reads(array(select id from chosen))`,
        reader,
      ),
    ).toEqual(['bare-call', 'nested-distributed-query']);
    expect(
      rulesOf(
        `create function f(p_ids bigint[]) returns json language plpgsql as $$
           declare v bigint[]; begin v := array(select id from webhooks where id = any(p_ids)); return reads(v); end $$`,
        reader,
      ),
    ).toEqual([]);
  });

  it('case-mutable: now() inside CASE or COALESCE in an UPDATE, not a variable', () => {
    expect(
      rulesOf(`update webhooks set completed_at = case when state = 3 then now() end where id = $1`),
    ).toEqual(['case-mutable']);
    expect(
      rulesOf(`update webhook_groups set next_seq = coalesce(next_seq, extract(epoch from now())::int)`),
    ).toContain('case-mutable');
    expect(
      rulesOf(
        `update webhooks set completed_at = case when state = 3 then $2::timestamptz end where id = $1`,
      ),
    ).toEqual([]);
    expect(
      rulesOf(`create function f(p_id bigint) returns void language plpgsql as $$
        declare v_now timestamptz := now();
        begin update webhooks set completed_at = case when state = 3 then v_now end where id = p_id; end $$`),
    ).toEqual([]);
  });

  it('stable-on-column: a stable function or timestamptz ± interval on a column in an UPDATE', () => {
    expect(
      rulesOf(`update webhooks w set next_attempt_at = now() + make_interval(secs => w.attempt_count)`),
    ).toEqual(['stable-on-column']);
    expect(rulesOf(`update webhook_targets set hold_until = hold_until + interval '1 second'`)).toEqual([
      'stable-on-column',
    ]);
    expect(
      rulesOf(`update webhooks set last_modified = now() where created < now() - interval '1 day'`),
    ).toEqual([]);
    expect(
      rulesOf(`update webhooks set next_attempt_at = now() + make_interval(secs => $1 / 1000.0)`),
    ).toEqual([]);
  });

  it('volatile-in-modification: a volatile function in an UPDATE', () => {
    expect(rulesOf(`update webhooks set attempt_count = (random() * 10)::int`)).toEqual([
      'volatile-in-modification',
    ]);
    expect(rulesOf(`update webhooks set attempt_count = $1::int`)).toEqual([]);
  });

  it('insert-cte: an INSERT in a WITH, or an INSERT with a WITH', () => {
    expect(
      rulesOf(`with g as (insert into webhook_groups (registration_id, group_key) values (1, 'k') returning next_seq)
               select next_seq from g`),
    ).toEqual(['insert-cte']);
    expect(
      rulesOf(
        `with s as (select 1 as id) insert into webhook_groups (registration_id, group_key) select id, 'k' from s`,
      ),
    ).toEqual(['insert-cte']);
    expect(
      rulesOf(`with d as (update webhook_groups set open_count = open_count - 1 where registration_id = $1 returning 1)
               select count(*) from d`),
    ).toEqual([]);
    expect(rulesOf(`insert into webhook_groups (registration_id, group_key) select $1, $2`)).toEqual([]);
  });

  it('volatile-in-cte: a volatile function in a CTE', () => {
    expect(rulesOf(`with n as (select nextval('webhooks_id_seq') as id) select id from n`)).toEqual([
      'volatile-in-cte',
    ]);
    expect(rulesOf(`with n as (select now() as at) select at from n`)).toEqual([]);
  });

  it('notify-placement: NOTIFY only as a guarded or one-node perform', () => {
    expect(rulesOf(`select count(*), pg_notify('webhook_due', '') from webhooks`)).toEqual([
      'notify-placement',
    ]);
    expect(rulesOf(`notify webhook_due`)).toEqual(['notify-placement']);
    const fn = (name: string, body: string) =>
      `create function ${name}(p_notify boolean) returns void language plpgsql as $$ begin ${body} end $$`;
    expect(rulesOf(fn('f', `perform pg_notify('webhook_due', '');`))).toEqual(['notify-placement']);
    expect(rulesOf(fn('f', `perform pg_notify('webhook_due', '') from webhooks;`))).toEqual([
      'notify-placement',
    ]);
    expect(rulesOf(fn('f', `if p_notify then perform pg_notify('webhook_due', ''); end if;`))).toEqual([]);
    expect(rulesOf(fn('webhooks_complete', `perform pg_notify('webhook_due', '');`))).toEqual([]);
  });
});
