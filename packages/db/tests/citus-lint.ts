import { loadModule, parsePlPgSQLSync, parseSync } from 'libpg-query';

/**
 * The lint of docs/scaling.md › How this is proven › The lint: the constructs of the queue's hot
 * SQL that Citus's planner refuses, found on the real Postgres parser (`libpg-query`, the Postgres
 * 18 parser as a WebAssembly build). Each rule is Citus's own check, named in `CITUS_RULES`. Test
 * code only (`libpg-query` is a dev dependency): `citus-lint.test.ts` runs it in `pnpm test`.
 */

export type CitusRule =
  | 'nested-distributed-query'
  | 'case-mutable'
  | 'stable-on-column'
  | 'volatile-in-modification'
  | 'insert-cte'
  | 'volatile-in-cte'
  | 'notify-placement';

/** What each rule refuses, and the Citus check (citusdata/citus) that refuses it. */
export const CITUS_RULES: Record<CitusRule, string> = {
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
};

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

export interface LintOptions {
  volatility: Volatility;
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
