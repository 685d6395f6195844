import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@platform/testkit';
import {
  type CitusRule,
  lintCitus,
  loadCitusLint,
  type LintOptions,
  VOLATILITY_SQL,
  volatilityOf,
} from '../tests/citus-lint';
import { DATABASE_FUNCTIONS } from './queue/functions/index';
import { HOT_STATEMENTS } from '../tests/hot-statements';

let db: TestDatabase;
let options: LintOptions;

beforeAll(async () => {
  await loadCitusLint();
  db = await createTestDatabase();
  const { rows } = await db.knex.raw<{ rows: { name: string; level: number }[] }>(VOLATILITY_SQL);
  options = { volatility: volatilityOf(rows), oneNodeFunctions: new Set(['webhooks_complete']) };
});

afterAll(async () => {
  await db?.drop();
});

const rulesOf = (sql: string, ...functions: string[]): CitusRule[] =>
  lintCitus([{ name: 'case', sql }, ...functions.map((f) => ({ name: 'helper', sql: f }))], options).map(
    (v) => v.rule,
  );

/**
 * What the queue's SQL still holds that Citus refuses, each waiting for its change: the claim
 * calls `webhooks_lease` from the statement that picks the rows (issue 31 point 1; docs/scaling.md,
 * the claim as `webhooks_claim`, statements of its own). A violation fixed must leave this list too.
 */
const KNOWN: { unit: string; rule: CitusRule }[] = [{ unit: 'claim', rule: 'nested-distributed-query' }];

describe('the queue SQL Citus would run', () => {
  it('holds none of the constructs Citus refuses but the KNOWN ones (docs/scaling.md › The lint)', () => {
    const units = [
      ...DATABASE_FUNCTIONS.map((sql) => ({ name: /function (\w+)/.exec(sql)![1]!, sql })),
      ...HOT_STATEMENTS,
    ];
    const violations = lintCitus(units, options);
    const unknown = violations
      .filter((v) => !KNOWN.some((k) => k.unit === v.unit && k.rule === v.rule))
      .map((v) => `${v.unit}: ${v.rule}: ${v.detail}\n    in ${v.statement}`);
    expect(unknown).toEqual([]);
    // a violation fixed leaves KNOWN too
    expect(KNOWN.filter((k) => !violations.some((v) => k.unit === v.unit && k.rule === v.rule))).toEqual([]);
  });
});

describe('each rule', () => {
  it('nested-distributed-query: a function that reads a table, called from a statement over a table', () => {
    const reader = `create function reads(p_ids bigint[]) returns json language sql as $$
      select json_agg(w) from webhooks w where w.id = any(p_ids) $$`;
    expect(
      rulesOf(
        `with chosen as (select id from webhooks limit 5) select reads(array(select id from chosen))`,
        reader,
      ),
    ).toEqual(['nested-distributed-query']);
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
