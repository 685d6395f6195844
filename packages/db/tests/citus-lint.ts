import type { Knex } from 'knex';
import { loadModule, parsePlPgSQLSync, parseSync } from 'libpg-query';

/**
 * The lint of docs/scaling.md › How this is proven › The lint: the constructs of the queue's hot
 * SQL that Citus's planner refuses, found on the real Postgres parser (`libpg-query`, the Postgres
 * 18 parser as a WebAssembly build). Each rule is Citus's own check, named in `CITUS_RULES`. Test
 * code only (`libpg-query` is a dev dependency): `citus-lint.test.ts` runs it in `pnpm test`.
 */

export type CitusRule =
  | 'bare-call'
  | 'nested-distributed-query'
  | 'case-mutable'
  | 'stable-on-column'
  | 'volatile-in-modification'
  | 'insert-cte'
  | 'volatile-in-cte'
  | 'notify-placement'
  | 'worker-sequence'
  | 'distributed-trigger'
  | 'concurrent-detach'
  | 'key-action-on-bucket'
  | 'key-across-placements';

/** What each rule refuses, and the Citus check (citusdata/citus) that refuses it. */
export const CITUS_RULES: Record<CitusRule, string> = {
  'bare-call':
    'R1: a statement sent to call a queue function that reads or writes a table is `select f(...)` or ' +
    '`select <columns> from f(...)` alone, its arguments bound parameters or constants: no WITH, WHERE, ' +
    'join, second call or computed argument (TryToDelegateFunctionCall, planner/function_call_delegation.c, ' +
    'delegates nothing else; GeneratingSubplans: "not pushing down function calls in CTEs or Subqueries")',
  'nested-distributed-query':
    'R3: a function that reads or writes a table, called from a statement that reads a table ("cannot ' +
    'execute a distributed query from a query on a shard", EnsureTaskExecutionAllowed, executor/multi_executor.c)',
  'case-mutable':
    'R4: a CASE or COALESCE holding a non-immutable function in an UPDATE/DELETE/ON CONFLICT clause ' +
    '("non-IMMUTABLE functions are not allowed in CASE or COALESCE statements", ' +
    'MasterIrreducibleExpressionWalker, planner/multi_router_planner.c)',
  'stable-on-column':
    'R4: a stable function or operator applied to a column in an UPDATE/DELETE/ON CONFLICT clause ' +
    '("STABLE functions used in UPDATE queries cannot be called with column references", ' +
    'TargetlistAndFunctionsSupported, planner/multi_router_planner.c)',
  'volatile-in-modification':
    'R4: a volatile function in an UPDATE/DELETE/ON CONFLICT clause ' +
    '("functions used in UPDATE queries on distributed tables must not be VOLATILE", ' +
    'TargetlistAndFunctionsSupported, planner/multi_router_planner.c)',
  'insert-cte':
    'R5: an INSERT inside a WITH, or an INSERT with a WITH ("Router planner doesn\'t support INSERT ' +
    'common table expressions", "... common table expressions with INSERT queries", ' +
    'ModifyPartialQuerySupported, planner/multi_router_planner.c): planned through the coordinator',
  'volatile-in-cte':
    'R5: a volatile function in a common table expression ("Router planner doesn\'t support VOLATILE ' +
    'functions in common table expressions", ModifyPartialQuerySupported)',
  'notify-placement':
    'R6: pg_notify/NOTIFY anywhere but a bare `perform pg_notify(...)` of a PL/pgSQL function that ' +
    'commits on one node: guarded by `p_notify` (the caller says its transaction is one-node), or in a ' +
    'function only the dispatcher calls, bare, outside a transaction block (Postgres refuses PREPARE ' +
    'TRANSACTION after NOTIFY; Citus does not forward notifications: commands/utility_hook.c)',
  'worker-sequence':
    'R7: a function (it runs on a worker once delegated) inserting a row whose id comes from a sequence, ' +
    'or calling nextval: an int or smallint sequence is pinned at its maximum on a worker, a bigint one ' +
    'restarts at groupid << 48 (AlterSequenceMinMax, worker/worker_data_fetch_protocol.c); ids come from ' +
    'queue_next_id, but for the tables of NODE_ENCODED_ID_TABLES',
  'distributed-trigger':
    'R8: a trigger on a distributed or reference table ("triggers are not supported on distributed tables", ' +
    '"... on reference tables": ErrorOutForTriggerIfNotSupported, commands/trigger.c; ' +
    'EnsureRelationCanBeDistributed, commands/create_distributed_table.c)',
  'concurrent-detach':
    'R9: ALTER TABLE ... DETACH PARTITION ... CONCURRENTLY, or its FINALIZE ("ALTER TABLE .. DETACH ' +
    'PARTITION .. CONCURRENTLY commands are currently unsupported", commands/table.c)',
  'key-action-on-bucket':
    'R9: a foreign key of a distributed table whose columns hold the bucket (every key between two ' +
    'distributed tables does, once colocated) with ON DELETE SET NULL/SET DEFAULT or ON UPDATE ' +
    'SET NULL/SET DEFAULT/CASCADE (EnsureSupportedFKeyOnDistKey, commands/foreign_constraint.c)',
  'key-across-placements':
    'R9: a foreign key to a distributed table from a table that is not distributed (a reference or ' +
    'coordinator-local one), or from a distributed table to a coordinator-local one ("Foreign keys are ' +
    'supported in two cases, either in between two colocated tables including partition column in the ' +
    'same ordinal in the both tables or from distributed to reference tables", ' +
    'ErrorIfUnsupportedForeignConstraintExists, commands/foreign_constraint.c)',
};

/** Where a table goes on Citus (docs/scaling.md › Where every table goes). */
export type Placement = 'distributed' | 'reference' | 'local';

const placed = (placement: Placement, tables: string): [string, Placement][] =>
  tables
    .trim()
    .split(/\s+/)
    .map((table) => [table, placement]);

/**
 * Every table of the schema and its placement, as docs/scaling.md › Where every table goes has
 * them (`local`: coordinator-local, in metadata or plain). R8 and R9 read it; the lint's test fails
 * on a table missing here, so a new table is placed when it is created.
 */
export const TABLE_PLACEMENT: Readonly<Record<string, Placement>> = Object.fromEntries([
  ...placed(
    'distributed',
    `webhooks webhook_groups webhook_registrations webhook_events webhook_attempt_stats webhook_attempts
     entity_changes webhook_targets mail_outbox operator_notifications webhook_operation_items
     properties entrances units unit_contracts processes process_feed documents files inquiries notices
     work_orders contact_details conferences conference_settings conference_roles conference_votes mandates
     topics topic_notes topic_templates resolutions resolution_options resolution_templates
     resolution_option_templates predefined_votes voting_sessions`,
  ),
  ...placed(
    'reference',
    `parties accounts permissions account_groups account_group_permissions account_contact_details
     operator_actions webhook_operations webhook_notification_settings`,
  ),
  ...placed(
    'local',
    `refresh_tokens mfa_login_tokens mfa_recovery_codes recovery_codes rate_limit_hits webhook_portal_sessions
     knex_migrations knex_migrations_lock`,
  ),
]);

/**
 * The tables whose rows a worker may number from their own `bigint` serial (R7): unique across
 * nodes (Citus starts each node's range at its group id << 48), not ordered, and nothing orders by
 * them (docs/scaling.md › Where every table goes).
 */
export const NODE_ENCODED_ID_TABLES: ReadonlySet<string> = new Set(['mail_outbox', 'operator_notifications']);

/** The function that hands out ids on a worker (docs/scaling.md › Ids): its own nextval is the rule. */
const ID_FUNCTION = 'queue_next_id';

/** Function names of the catalog by the worst volatility of any of their overloads. */
export interface Volatility {
  /** Names with a stable overload and none volatile. */
  stable: ReadonlySet<string>;
  /** Names with a volatile overload. */
  volatile: ReadonlySet<string>;
}

/** The SQL that reads `Volatility` from a database's catalog (all schemas). */
export const VOLATILITY_SQL = `select proname as name, max(case provolatile when 'v' then 2 when 's' then 1 else 0 end) as level
  from pg_proc group by proname having max(case provolatile when 'v' then 2 when 's' then 1 else 0 end) > 0`;

export function volatilityOf(rows: readonly { name: string; level: number }[]): Volatility {
  return {
    stable: new Set(rows.filter((r) => Number(r.level) === 1).map((r) => r.name)),
    volatile: new Set(rows.filter((r) => Number(r.level) === 2).map((r) => r.name)),
  };
}

/** A unit to lint: one statement the queue's TypeScript sends, or one `create function`. */
export interface LintUnit {
  name: string;
  sql: string;
}

export interface Violation {
  unit: string;
  rule: CitusRule;
  /** The statement (or PL/pgSQL expression) it was found in, shortened. */
  statement: string;
  detail: string;
}

/** A column whose value, when an insert leaves it out, comes from a sequence; or a sequence alone. */
export interface SequenceColumn {
  /** Null for a sequence no column defaults to. */
  table: string | null;
  column: string | null;
  sequence: string;
  /** `smallint`, `integer` or `bigint`. */
  type: string;
}

export interface LintOptions {
  volatility: Volatility;
  /** The sequences of the schema and the columns they number (R7). */
  sequences: readonly SequenceColumn[];
  /**
   * Functions only the dispatcher calls, bare and outside any transaction block, that write one
   * bucket's shard and no reference table: their transaction is one-node, so their NOTIFY fires
   * where they commit (R6).
   */
  oneNodeFunctions: ReadonlySet<string>;
}

/** Loads the parser (WebAssembly); once, before `lintCitus`. */
export async function loadCitusLint(): Promise<void> {
  await loadModule();
}

type Node = Record<string, unknown>;

/** Calls `visit` on every parse node (`{ TypeName: body }`) under `value`; `false` skips its children. */
function walk(value: unknown, visit: (type: string, body: Node) => boolean | void): void {
  if (Array.isArray(value)) {
    for (const item of value) walk(item, visit);
    return;
  }
  if (value === null || typeof value !== 'object') return;
  for (const [key, child] of Object.entries(value as Node)) {
    if (/^[A-Z]/.test(key) && child !== null && typeof child === 'object' && !Array.isArray(child)) {
      if (visit(key, child as Node) === false) continue;
    }
    walk(child, visit);
  }
}

const names = (list: unknown): string[] =>
  ((list as { String?: { sval: string } }[] | undefined) ?? []).map((n) => n.String?.sval ?? '');

const isInterval = (value: unknown): boolean => {
  const node = value as
    { TypeCast?: { typeName: { names: unknown } }; FuncCall?: { funcname: unknown } } | undefined;
  if (node?.TypeCast) return names(node.TypeCast.typeName.names).at(-1) === 'interval';
  if (node?.FuncCall) return names(node.FuncCall.funcname).at(-1) === 'make_interval';
  return false;
};

type Mutability = 'volatile' | 'stable' | 'immutable';

/**
 * The volatility of a function-like node, null for other nodes. An operator is known only for
 * `timestamptz ± interval` (an interval literal, cast or `make_interval` on one side): the parser
 * has no types, and that is the stable operator the queue's SQL uses.
 */
function mutabilityOf(type: string, body: Node, volatility: Volatility): Mutability | null {
  if (type === 'FuncCall') {
    const name = names(body.funcname).at(-1)!;
    if (volatility.volatile.has(name)) return 'volatile';
    return volatility.stable.has(name) ? 'stable' : 'immutable';
  }
  if (type === 'SQLValueFunction') return 'stable';
  if (type === 'A_Expr' && body.kind === 'AEXPR_OP' && ['+', '-'].includes(names(body.name).at(-1)!)) {
    return isInterval(body.lexpr) || isInterval(body.rexpr) ? 'stable' : null;
  }
  return null;
}

function contains(value: unknown, volatility: Volatility, levels: Mutability[]): string | null {
  let found: string | null = null;
  walk(value, (type, body) => {
    if (found) return false;
    const mutability = mutabilityOf(type, body, volatility);
    if (mutability && levels.includes(mutability)) found = describe(type, body);
  });
  return found;
}

function describe(type: string, body: Node): string {
  if (type === 'FuncCall') return `${names(body.funcname).at(-1)}()`;
  if (type === 'SQLValueFunction')
    return String(body.op)
      .replace(/^SVFOP_/, '')
      .toLowerCase();
  return `${names(body.name).at(-1)} interval`;
}

/** A column reference outside subqueries (a PL/pgSQL variable or parameter is not one). */
function columnIn(value: unknown, variables: ReadonlySet<string>): string | null {
  let found: string | null = null;
  walk(value, (type, body) => {
    if (found || type === 'SubLink') return false;
    if (type === 'ColumnRef') {
      const fields = names(body.fields);
      if (!variables.has(fields[0]!)) found = fields.join('.');
    }
  });
  return found;
}

/** R4 on one modifying statement's clauses, as Citus's router planner checks them. */
function checkModification(
  type: string,
  body: Node,
  variables: ReadonlySet<string>,
  options: LintOptions,
  report: (rule: CitusRule, detail: string) => void,
): void {
  const clause = (node: unknown) => (node as Node | undefined) ?? null;
  const conflict = body.onConflictClause as Node | undefined;
  const roots: unknown[] =
    type === 'UpdateStmt'
      ? [body.targetList, body.whereClause, body.returningList]
      : type === 'DeleteStmt'
        ? [body.whereClause, body.returningList]
        : [conflict?.targetList, conflict?.whereClause, body.returningList];
  for (const root of roots.map(clause)) {
    if (!root) continue;
    const volatileCall = contains(root, options.volatility, ['volatile']);
    if (volatileCall) report('volatile-in-modification', `${volatileCall} in ${verb(type)}`);
    walk(root, (nodeType, node) => {
      // Citus does not look into subqueries here
      if (nodeType === 'SubLink') return false;
      if (nodeType === 'CaseExpr' || nodeType === 'CoalesceExpr') {
        const call = contains(node, options.volatility, ['stable', 'volatile']);
        if (call) {
          report(
            'case-mutable',
            `${call} inside ${nodeType === 'CaseExpr' ? 'CASE' : 'COALESCE'} in ${verb(type)}`,
          );
          return false;
        }
        return;
      }
      const mutability = mutabilityOf(nodeType, node, options.volatility);
      if (mutability === 'stable') {
        const args = nodeType === 'A_Expr' ? [node.lexpr, node.rexpr] : node.args;
        const column = columnIn(args, variables);
        if (column)
          report('stable-on-column', `${describe(nodeType, node)} applied to ${column} in ${verb(type)}`);
      }
    });
  }
}

const verb = (type: string) =>
  type === 'UpdateStmt' ? 'an UPDATE' : type === 'DeleteStmt' ? 'a DELETE' : 'an INSERT ... ON CONFLICT';

interface Context {
  /** The statement is a PL/pgSQL `perform`. */
  perform: boolean;
  /** It runs only when `p_notify` is true (inside an IF whose condition names it). */
  guarded: boolean;
  /** The function it is in, if any. */
  functionName: string | null;
}

function isBareNotify(stmt: Node): boolean {
  const select = stmt.SelectStmt as Node | undefined;
  if (!select || select.fromClause || select.whereClause || select.withClause) return false;
  const targets = select.targetList as { ResTarget: { val: { FuncCall?: Node } } }[] | undefined;
  return targets?.length === 1 && names(targets[0]!.ResTarget.val.FuncCall?.funcname).at(-1) === 'pg_notify';
}

function lintStatement(
  sql: string,
  variables: ReadonlySet<string>,
  context: Context,
  options: LintOptions,
  report: (rule: CitusRule, statement: string, detail: string) => void,
): void {
  const { stmts } = parseSync(sql) as { stmts: { stmt: Node }[] };
  const short = sql.replace(/\s+/g, ' ').trim().slice(0, 160);
  for (const { stmt } of stmts) {
    const here = (rule: CitusRule, detail: string) => report(rule, short, detail);
    let notifies = false;
    walk(stmt, (type, body) => {
      if (type === 'UpdateStmt' || type === 'DeleteStmt' || type === 'InsertStmt') {
        checkModification(type, body, variables, options, here);
      }
      const withClause = body.withClause as { ctes?: { CommonTableExpr: Node }[] } | undefined;
      if (withClause?.ctes) {
        if (type === 'InsertStmt') here('insert-cte', 'an INSERT with a WITH clause');
        for (const { CommonTableExpr: cte } of withClause.ctes) {
          const query = cte.ctequery as Node;
          if (query.InsertStmt) here('insert-cte', `the CTE ${String(cte.ctename)} is an INSERT`);
          const call = contains(query, options.volatility, ['volatile']);
          if (call) here('volatile-in-cte', `${call} in the CTE ${String(cte.ctename)}`);
        }
      }
      if (type === 'NotifyStmt' || (type === 'FuncCall' && names(body.funcname).at(-1) === 'pg_notify')) {
        notifies = true;
      }
      if (type === 'AlterTableCmd' && isConcurrentDetach(body)) {
        here('concurrent-detach', `${verbOfDetach(body)} of a partition`);
      }
      if (context.functionName !== null && context.functionName !== ID_FUNCTION) {
        for (const detail of sequenceUses(type, body, options.sequences)) here('worker-sequence', detail);
      }
    });
    if (!notifies) continue;
    const oneNode =
      context.guarded ||
      (context.functionName !== null && options.oneNodeFunctions.has(context.functionName));
    if (!context.perform || !isBareNotify(stmt)) {
      here('notify-placement', 'a NOTIFY inside a statement: it fires where the statement is planned');
    } else if (!oneNode) {
      here('notify-placement', 'a NOTIFY not guarded by p_notify in a function its caller may run two-phase');
    }
  }
}

const isConcurrentDetach = (cmd: Node): boolean =>
  cmd.subtype === 'AT_DetachPartitionFinalize' ||
  (cmd.subtype === 'AT_DetachPartition' &&
    (cmd.def as { PartitionCmd?: Node }).PartitionCmd?.concurrent === true);

const verbOfDetach = (cmd: Node) =>
  cmd.subtype === 'AT_DetachPartitionFinalize' ? 'DETACH ... FINALIZE' : 'DETACH ... CONCURRENTLY';

/** Why a sequence may not number `table`'s rows on a worker (R7), or null when it may. */
function sequenceProblem(use: SequenceColumn, table: string | null): string | null {
  if (use.type !== 'bigint') {
    return `${use.sequence}, ${use.type}: pinned at its maximum on a worker, nextval fails there`;
  }
  if (table !== null && NODE_ENCODED_ID_TABLES.has(table)) return null;
  return `${use.sequence}, bigint: restarts at groupid << 48 on a worker, ids not day-ordered (${ID_FUNCTION})`;
}

/** R7 on one parse node: an INSERT that leaves a sequence-numbered column to its default, or a nextval. */
function sequenceUses(type: string, body: Node, sequences: readonly SequenceColumn[]): string[] {
  if (type === 'FuncCall' && names(body.funcname).at(-1) === 'nextval') {
    let literal: string | null = null;
    walk(body.args, (argType, arg) => {
      if (argType === 'A_Const' && (arg.sval as { sval?: string } | undefined)?.sval) {
        literal = (arg.sval as { sval: string }).sval;
      }
    });
    const use = sequences.find((s) => s.sequence === literal);
    if (!use) return [`nextval(${literal ?? '...'}) of a sequence not known to the lint`];
    const problem = sequenceProblem(use, use.table);
    return problem ? [`nextval('${use.sequence}'): ${problem}`] : [];
  }
  if (type !== 'InsertStmt') return [];
  const table = String((body.relation as Node).relname);
  const columns = (body.cols as { ResTarget: { name: string } }[] | undefined)?.map((c) => c.ResTarget.name);
  const select = (body.selectStmt as { SelectStmt?: Node } | undefined)?.SelectStmt;
  const rows = ((select?.valuesLists as { List: { items: Node[] } }[] | undefined) ?? []).map(
    (row) => row.List.items,
  );
  const takesDefault = (column: string): boolean => {
    // `default values`
    if (!select) return true;
    // without a column list, a DEFAULT cannot be placed without the table's column order
    if (!columns) return rows.some((row) => row.some((item) => 'SetToDefault' in item));
    const at = columns.indexOf(column);
    return at < 0 || rows.some((row) => row[at] !== undefined && 'SetToDefault' in row[at]!);
  };
  return sequences
    .filter((use) => use.table === table && use.column !== null && takesDefault(use.column))
    .flatMap((use) => {
      const problem = sequenceProblem(use, table);
      return problem ? [`an INSERT into ${table} takes ${use.column} from ${problem}`] : [];
    });
}

interface PlExpression {
  query: string;
  parseMode: number;
  perform: boolean;
  guarded: boolean;
}

/** Every SQL statement and expression of a PL/pgSQL function, with where it sits. */
function plExpressions(value: unknown, guarded: boolean, out: PlExpression[]): void {
  if (Array.isArray(value)) {
    for (const item of value) plExpressions(item, guarded, out);
    return;
  }
  if (value === null || typeof value !== 'object') return;
  const node = value as Node;
  if (node.PLpgSQL_expr) {
    const expr = node.PLpgSQL_expr as { query: string; parseMode: number };
    out.push({ ...expr, perform: false, guarded });
    return;
  }
  if (node.PLpgSQL_stmt_perform) {
    const expr = (node.PLpgSQL_stmt_perform as { expr: { PLpgSQL_expr: { query: string } } }).expr
      .PLpgSQL_expr;
    out.push({ query: expr.query, parseMode: 0, perform: true, guarded });
    return;
  }
  if (node.PLpgSQL_stmt_if) {
    const stmt = node.PLpgSQL_stmt_if as Node;
    const cond = (stmt.cond as { PLpgSQL_expr: { query: string } }).PLpgSQL_expr.query;
    plExpressions(stmt.cond, guarded, out);
    plExpressions(stmt.then_body, guarded || /\bp_notify\b/.test(cond), out);
    plExpressions(stmt.elsif_list, guarded, out);
    plExpressions(stmt.else_body, guarded, out);
    return;
  }
  for (const child of Object.values(node)) plExpressions(child, guarded, out);
}

/** A PL/pgSQL expression as a statement the SQL parser takes. */
function asStatement(expression: PlExpression): string {
  if (expression.parseMode === 0) return expression.query;
  return `SELECT ${expression.query.replace(/^\s*[\w.[\]"]+\s*:=\s*/, '')}`;
}

/** Knex's bindings (`??`, `?`, `:name`) as what Postgres parses (an identifier, `$n`). */
export function knexToSql(sql: string): string {
  let n = 0;
  return sql
    .replace(/\?\?/g, 'knex_identifier')
    .replace(/\?/g, () => `$${++n}`)
    .replace(/(?<![:\w]):([A-Za-z]\w*)/g, () => `$${++n}`);
}

interface UnitStatement {
  sql: string;
  variables: ReadonlySet<string>;
  context: Context;
}

/** The statements of a unit: itself (a statement knex sends), or a function's body, statement by statement. */
function statementsOf(unit: LintUnit): UnitStatement[] {
  if (!/^\s*create\s+(or\s+replace\s+)?function\b/i.test(unit.sql)) {
    return [
      {
        sql: knexToSql(unit.sql),
        variables: new Set(),
        context: { perform: false, guarded: false, functionName: null },
      },
    ];
  }
  const { stmts } = parseSync(unit.sql) as { stmts: { stmt: Node }[] };
  const create = stmts[0]!.stmt.CreateFunctionStmt as Node;
  const functionName = names(create.funcname).at(-1)!;
  const option = (name: string) =>
    (create.options as { DefElem: { defname: string; arg: unknown } }[]).find(
      (o) => o.DefElem.defname === name,
    )?.DefElem.arg;
  const language = (option('language') as { String: { sval: string } }).String.sval;
  if (language === 'plpgsql') {
    const parsed = parsePlPgSQLSync(unit.sql) as { plpgsql_funcs: { PLpgSQL_function: Node }[] };
    const fn = parsed.plpgsql_funcs[0]!.PLpgSQL_function;
    const variables = new Set<string>();
    walk(fn.datums, (type, body) => {
      if (type.startsWith('PLpgSQL_') && typeof body.refname === 'string') variables.add(body.refname);
    });
    const expressions: PlExpression[] = [];
    plExpressions(fn.datums, false, expressions);
    plExpressions(fn.action, false, expressions);
    return expressions.map((expression) => ({
      sql: asStatement(expression),
      variables,
      context: { perform: expression.perform, guarded: expression.guarded, functionName },
    }));
  }
  if (language === 'sql') {
    const body = (option('as') as { List: { items: { String: { sval: string } }[] } }).List.items[0]!.String
      .sval;
    const parameters = new Set(
      ((create.parameters as { FunctionParameter: { name?: string } }[] | undefined) ?? [])
        .map((p) => p.FunctionParameter.name)
        .filter((name): name is string => !!name),
    );
    return [{ sql: body, variables: parameters, context: { perform: false, guarded: false, functionName } }];
  }
  return [];
}

/** The tables a statement names (CTE names left out), and the functions it calls. */
function referencesOf(sql: string): { tables: Set<string>; calls: Set<string> } {
  const { stmts } = parseSync(sql) as { stmts: { stmt: Node }[] };
  const tables = new Set<string>();
  const ctes = new Set<string>();
  const calls = new Set<string>();
  walk(stmts, (type, body) => {
    if (type === 'RangeVar') tables.add(String(body.relname));
    if (type === 'CommonTableExpr') ctes.add(String(body.ctename));
    if (type === 'FuncCall') calls.add(names(body.funcname).at(-1)!);
  });
  for (const cte of ctes) tables.delete(cte);
  return { tables, calls };
}

/**
 * The units' functions that read or write a table, themselves or through a function they call:
 * what Citus would run as a distributed query from inside the statement that calls them (R3).
 */
function tableFunctions(units: readonly LintUnit[]): Set<string> {
  const direct = new Map<string, { tables: boolean; calls: Set<string> }>();
  for (const unit of units) {
    for (const { sql, context } of statementsOf(unit)) {
      if (!context.functionName) continue;
      const entry = direct.get(context.functionName) ?? { tables: false, calls: new Set<string>() };
      const refs = referencesOf(sql);
      entry.tables ||= refs.tables.size > 0;
      for (const call of refs.calls) entry.calls.add(call);
      direct.set(context.functionName, entry);
    }
  }
  const result = new Set([...direct].filter(([, entry]) => entry.tables).map(([name]) => name));
  for (let grew = true; grew;) {
    grew = false;
    for (const [name, entry] of direct) {
      if (!result.has(name) && [...entry.calls].some((call) => result.has(call))) {
        result.add(name);
        grew = true;
      }
    }
  }
  return result;
}

/** A bound parameter or a constant, cast or named (`p => $1`) at most: what R1 lets an argument be. */
const isConstantArgument = (node: Node): boolean => {
  if ('ParamRef' in node || 'A_Const' in node) return true;
  if (node.TypeCast) return isConstantArgument((node.TypeCast as Node).arg as Node);
  if (node.NamedArgExpr) return isConstantArgument((node.NamedArgExpr as Node).arg as Node);
  return false;
};

const SELECT_CLAUSES: [string, string][] = [
  ['withClause', 'a WITH'],
  ['whereClause', 'a WHERE'],
  ['groupClause', 'a GROUP BY'],
  ['havingClause', 'a HAVING'],
  ['windowClause', 'a WINDOW'],
  ['distinctClause', 'a DISTINCT'],
  ['sortClause', 'an ORDER BY'],
  ['limitCount', 'a LIMIT'],
  ['limitOffset', 'an OFFSET'],
  ['lockingClause', 'a FOR UPDATE'],
];

/**
 * Why a statement that calls a queue function over tables is not the bare call Citus delegates
 * (R1), or null: `select f(args)`, or `select columns from f(args)`, and nothing else
 * (`TryToDelegateFunctionCall`), each argument a bound parameter or a constant.
 */
function bareCallProblem(sql: string): string | null {
  const { stmts } = parseSync(sql) as { stmts: { stmt: Node }[] };
  const select = stmts.length === 1 ? (stmts[0]!.stmt.SelectStmt as Node | undefined) : undefined;
  if (!select) return 'not one SELECT';
  if (select.op !== 'SETOP_NONE') return 'a set operation';
  for (const [clause, what] of SELECT_CLAUSES) if (select[clause]) return `${what}: not a bare call`;
  const targets = (select.targetList as { ResTarget: { val: Node } }[] | undefined) ?? [];
  const from = select.fromClause as Node[] | undefined;
  let call: Node | undefined;
  if (!from) {
    if (targets.length !== 1 || !targets[0]!.ResTarget.val.FuncCall)
      return 'more than one call in its SELECT';
    call = targets[0]!.ResTarget.val.FuncCall as Node;
  } else {
    const range = from.length === 1 ? (from[0]!.RangeFunction as Node | undefined) : undefined;
    const functions = range?.functions as { List: { items: Node[] } }[] | undefined;
    if (!range || range.lateral || range.ordinality || range.is_rowsfrom || functions?.length !== 1) {
      return 'a FROM other than the one call';
    }
    call = functions[0]!.List.items[0]!.FuncCall as Node | undefined;
    if (!call) return 'a FROM other than the one call';
    let computed: string | null = null;
    walk(targets, (type) => {
      if (
        !computed &&
        type !== 'ResTarget' &&
        type !== 'ColumnRef' &&
        type !== 'String' &&
        type !== 'A_Star'
      ) {
        computed = type;
      }
    });
    if (computed) return `a SELECT list that computes (${computed}) over the call in its FROM`;
  }
  const args = (call.args as Node[] | undefined) ?? [];
  const computed = args.find((arg) => !isConstantArgument(arg));
  if (computed) return `an argument of ${names(call.funcname).at(-1)}() that is not a parameter or constant`;
  return null;
}

/** Lints each unit: a `create function` statement (its body too) or a statement knex sends. */
export function lintCitus(units: readonly LintUnit[], options: LintOptions): Violation[] {
  const violations: Violation[] = [];
  const readers = tableFunctions(units);
  for (const unit of units) {
    const report = (rule: CitusRule, statement: string, detail: string) =>
      violations.push({ unit: unit.name, rule, statement, detail });
    for (const { sql, variables, context } of statementsOf(unit)) {
      lintStatement(sql, variables, context, options, report);
      const refs = referencesOf(sql);
      if (context.functionName === null && [...refs.calls].some((call) => readers.has(call))) {
        const problem = bareCallProblem(sql);
        if (problem) report('bare-call', sql.replace(/\s+/g, ' ').trim().slice(0, 160), problem);
      }
      const nested = [...refs.calls].filter((call) => readers.has(call));
      if (refs.tables.size > 0 && nested.length > 0) {
        report(
          'nested-distributed-query',
          sql.replace(/\s+/g, ' ').trim().slice(0, 160),
          `${nested.join(', ')} called from a statement over ${[...refs.tables].join(', ')}`,
        );
      }
    }
  }
  return violations;
}

/** A foreign key of the schema, by the root tables (a partition's copy of a key is left out). */
export interface ForeignKey {
  name: string;
  table: string;
  columns: string[];
  references: string;
  /** `confdeltype`, `confupdtype`: a no action, r restrict, c cascade, n set null, d set default. */
  onDelete: string;
  onUpdate: string;
}

/** What the lint reads from a migrated database's catalog (schema `public`). */
export interface CitusCatalog {
  volatility: Volatility;
  /** The tables, partitions left out. */
  tables: string[];
  sequences: SequenceColumn[];
  /** Triggers a user created (a foreign key's own are internal), by root table. */
  triggers: { table: string; name: string }[];
  foreignKeys: ForeignKey[];
}

const root = (oid: string) => `coalesce(pg_partition_root(${oid}), ${oid})`;

const CATALOG_SQL = {
  tables: `select c.relname as name from pg_class c
            where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'p') and not c.relispartition`,
  sequences: `select c.relname as "table", a.attname::text as "column", s.relname as sequence,
                     format_type(q.seqtypid, null) as type
                from pg_sequence q
                join pg_class s on s.oid = q.seqrelid
                left join pg_depend d
                  on (d.refclassid = 'pg_class'::regclass and d.refobjid = s.oid and d.classid = 'pg_attrdef'::regclass)
                  or (d.classid = 'pg_class'::regclass and d.objid = s.oid and d.deptype = 'i')
                left join pg_attrdef ad on d.classid = 'pg_attrdef'::regclass and ad.oid = d.objid
                left join pg_class c on c.oid = coalesce(ad.adrelid, case when d.deptype = 'i' then d.refobjid end)
                left join pg_attribute a on a.attrelid = c.oid
                                        and a.attnum = coalesce(ad.adnum, case when d.deptype = 'i' then d.refobjsubid end)
               where s.relnamespace = 'public'::regnamespace and not coalesce(c.relispartition, false)`,
  triggers: `select r.relname as "table", t.tgname as name
               from pg_trigger t join pg_class r on r.oid = ${root('t.tgrelid')}
              where r.relnamespace = 'public'::regnamespace and not t.tgisinternal and t.tgparentid = 0`,
  foreignKeys: `select k.conname as name, r.relname as "table", f.relname as "references",
                       array(select a.attname::text from unnest(k.conkey) as n(attnum)
                               join pg_attribute a on a.attrelid = k.conrelid and a.attnum = n.attnum) as columns,
                       k.confdeltype as "onDelete", k.confupdtype as "onUpdate"
                  from pg_constraint k
                  join pg_class r on r.oid = ${root('k.conrelid')}
                  join pg_class f on f.oid = ${root('k.confrelid')}
                 where k.contype = 'f' and k.conparentid = 0 and r.relnamespace = 'public'::regnamespace`,
};

/** Reads `CitusCatalog` through `knex` (a migrated test database, or a transaction on one). */
export async function readCitusCatalog(knex: Knex | Knex.Transaction): Promise<CitusCatalog> {
  const read = async <T>(sql: string): Promise<T[]> => (await knex.raw<{ rows: T[] }>(sql)).rows;
  const [volatility, tables, sequences, triggers, foreignKeys] = await Promise.all([
    read<{ name: string; level: number }>(VOLATILITY_SQL),
    read<{ name: string }>(CATALOG_SQL.tables),
    read<SequenceColumn>(CATALOG_SQL.sequences),
    read<{ table: string; name: string }>(CATALOG_SQL.triggers),
    read<ForeignKey>(CATALOG_SQL.foreignKeys),
  ]);
  return {
    volatility: volatilityOf(volatility),
    tables: tables.map((t) => t.name),
    sequences,
    triggers,
    foreignKeys,
  };
}

const ACTIONS: Record<string, string> = { c: 'CASCADE', n: 'SET NULL', d: 'SET DEFAULT' };

/**
 * R8 and R9 on the catalog: triggers on distributed and reference tables, and foreign keys Citus
 * refuses between the placements of `placement` (a table it does not place is left to the test
 * that every table is placed). Each violation's unit is the table, its detail names the trigger or
 * the key.
 */
export function lintCatalog(
  catalog: Pick<CitusCatalog, 'triggers' | 'foreignKeys'>,
  placement: Readonly<Record<string, Placement>> = TABLE_PLACEMENT,
): Violation[] {
  const violations: Violation[] = [];
  for (const trigger of catalog.triggers) {
    const where = placement[trigger.table];
    if (where === 'distributed' || where === 'reference') {
      violations.push({
        unit: trigger.table,
        rule: 'distributed-trigger',
        statement: `trigger ${trigger.name} on ${trigger.table}`,
        detail: `the trigger ${trigger.name} on a ${where} table`,
      });
    }
  }
  for (const key of catalog.foreignKeys) {
    const from = placement[key.table];
    const to = placement[key.references];
    if (!from || !to) continue;
    const statement = `constraint ${key.name} foreign key (${key.columns.join(', ')}) references ${key.references}`;
    const report = (rule: CitusRule, detail: string) =>
      violations.push({ unit: key.table, rule, statement, detail: `${key.name}: ${detail}` });
    if (to === 'distributed' && from !== 'distributed') {
      report('key-across-placements', `from a ${from} table to a distributed one`);
    } else if (from === 'distributed' && to === 'local') {
      report('key-across-placements', 'from a distributed table to a coordinator-local one');
    }
    const onBucket = from === 'distributed' && (to === 'distributed' || key.columns.includes('bucket'));
    const onDelete = ['n', 'd'].includes(key.onDelete) ? `ON DELETE ${ACTIONS[key.onDelete]}` : null;
    const onUpdate = ['n', 'd', 'c'].includes(key.onUpdate) ? `ON UPDATE ${ACTIONS[key.onUpdate]}` : null;
    if (onBucket && (onDelete || onUpdate)) {
      report(
        'key-action-on-bucket',
        `${[onDelete, onUpdate].filter(Boolean).join(', ')} on a key that holds the bucket`,
      );
    }
  }
  return violations;
}
