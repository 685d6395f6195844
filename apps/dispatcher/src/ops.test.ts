import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import {
  createTestDatabase,
  startDispatcher,
  type DispatcherProcess,
  type TestDatabase,
} from '@platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';

// The alert rules (ops/prometheus) and the Grafana dashboard (ops/grafana) against what the real
// dispatcher exports and the real schema; docs/operations.md.

const ROOT = resolve(import.meta.dirname, '../../..');
const RULES = resolve(ROOT, 'ops/prometheus/alerts.yml');
const RULE_TESTS = resolve(ROOT, 'ops/prometheus/alerts.test.yml');
const DASHBOARD = resolve(ROOT, 'ops/grafana/dispatcher.json');
const run = promisify(execFile);

/** Series Prometheus makes itself for every scrape target rather than reads from /metrics. */
const PROMETHEUS_OWN = ['up'];

/** Words of PromQL that look like a metric name but are not. */
const PROMQL_WORDS = new Set(['and', 'or', 'unless', 'offset', 'bool', 'by', 'without', 'on', 'ignoring']);

/**
 * The metric names a PromQL expression selects: what is left once strings, label matchers, ranges,
 * groupings, function calls and keywords are taken out.
 */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = [...bare.matchAll(/(?<![\w.:$])([a-zA-Z_:][a-zA-Z0-9_:]*)(?![\w:]|\s*\()/g)].map(
    (m) => m[1]!,
  );
  return [...new Set(names.filter((name) => !PROMQL_WORDS.has(name)))];
}

async function promtool(...args: string[]) {
  try {
    return await run('promtool', args, { cwd: resolve(ROOT, 'ops/prometheus') });
  } catch (error) {
    const { code, stdout, stderr } = error as { code?: string; stdout?: string; stderr?: string };
    if (code === 'ENOENT')
      throw new Error("promtool is missing: install Debian's prometheus package (.ci/run does)");
    throw new Error(`promtool ${args.join(' ')} failed:\n${stdout ?? ''}${stderr ?? ''}`);
  }
}

interface Target {
  refId?: string;
  datasource?: { type?: string; uid?: string };
  expr?: string;
  rawSql?: string;
}

interface Panel {
  id?: number;
  type?: string;
  title?: string;
  datasource?: { type?: string; uid?: string };
  gridPos?: { x: number; y: number; w: number; h: number };
  targets?: Target[];
}

interface Dashboard {
  uid?: string;
  title?: string;
  schemaVersion?: number;
  panels?: Panel[];
  templating?: { list: { type: string; name: string; query: string }[] };
}

const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as Dashboard;
const rules = parse(readFileSync(RULES, 'utf8')) as {
  groups: { name: string; rules: { alert?: string; expr: string }[] }[];
};

describe('the alert rules', () => {
  it('pass promtool check rules', async () => {
    const { stdout } = await promtool('check', 'rules', RULES);
    expect(stdout).toMatch(/SUCCESS: \d+ rules found/);
  });

  it('pass their unit tests (promtool test rules)', async () => {
    const { stdout } = await promtool('test', 'rules', RULE_TESTS);
    expect(stdout).toContain('SUCCESS');
  });

  it('each link to their section of docs/operations.md', () => {
    const operations = readFileSync(resolve(ROOT, 'docs/operations.md'), 'utf8');
    const alerts = rules.groups.flatMap((group) => group.rules).filter((rule) => rule.alert);
    expect(alerts.length).toBeGreaterThanOrEqual(6);
    for (const rule of alerts as { alert: string; annotations?: { runbook?: string } }[]) {
      const anchor = rule.annotations?.runbook?.split('#')[1];
      expect(anchor, rule.alert).toBeDefined();
      // the heading that anchor comes from (GitHub lowercases it)
      const heading = operations
        .split('\n')
        .find((line) => /^#{2,4} /.test(line) && line.replace(/^#+ /, '').toLowerCase() === anchor);
      expect(heading, `docs/operations.md has a heading for ${rule.alert}`).toBeDefined();
    }
  });
});

describe('metricNames', () => {
  it('finds the metrics of an expression and nothing else', () => {
    expect(
      metricNames(
        'histogram_quantile(0.99, sum by (le) (rate(a_bucket{outcome!~"x|y"}[5m]))) / sum without(instance) (b offset 1h) > 0.25 and absent(up{job="d"} == 1)',
      ).sort(),
    ).toEqual(['a_bucket', 'b', 'up']);
  });
});

describe('the Grafana dashboard', () => {
  it('is a dashboard Grafana loads: schema version, unique panel ids, grid positions, datasources and targets', () => {
    expect(dashboard.uid).toMatch(/^[a-zA-Z0-9_-]{1,40}$/);
    expect(dashboard.title).toBeTruthy();
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36);
    const panels = dashboard.panels ?? [];
    expect(panels.length).toBeGreaterThan(0);

    const ids = panels.map((panel) => panel.id);
    expect(ids.every((id) => Number.isInteger(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);

    // every datasource a panel names is one of the dashboard's datasource variables
    const variables = new Map(
      (dashboard.templating?.list ?? [])
        .filter((v) => v.type === 'datasource')
        .map((v) => [`\${${v.name}}`, v.query]),
    );
    const cells = new Set<string>();
    for (const panel of panels) {
      const where = `panel ${panel.id} (${panel.title})`;
      const grid = panel.gridPos!;
      expect(grid, where).toBeDefined();
      for (const n of [grid.x, grid.y, grid.w, grid.h])
        expect(Number.isInteger(n) && n >= 0, where).toBe(true);
      expect(grid.w > 0 && grid.h > 0 && grid.x + grid.w <= 24, where).toBe(true);
      for (let x = grid.x; x < grid.x + grid.w; x++) {
        for (let y = grid.y; y < grid.y + grid.h; y++) {
          expect(cells.has(`${x},${y}`), `${where} overlaps another panel`).toBe(false);
          cells.add(`${x},${y}`);
        }
      }
      if (panel.type === 'row') continue;
      expect(panel.title, where).toBeTruthy();
      expect(variables.get(panel.datasource?.uid ?? ''), `${where} datasource`).toBe(panel.datasource?.type);
      expect(panel.targets?.length, where).toBeGreaterThan(0);
      const refIds = panel.targets!.map((target) => target.refId);
      expect(new Set(refIds).size, where).toBe(refIds.length);
      for (const target of panel.targets!) {
        expect(target.datasource, where).toEqual(panel.datasource);
        if (panel.datasource?.type === 'prometheus') expect(target.expr, where).toBeTruthy();
        else expect(target.rawSql, where).toBeTruthy();
      }
    }
  });
});

describe('against the real dispatcher and schema', () => {
  let db: TestDatabase;
  let dispatcher: DispatcherProcess;
  let exported: Set<string>;

  beforeAll(async () => {
    db = await createTestDatabase();
    dispatcher = await startDispatcher(db.url, { LOG_LEVEL: 'warn' });
    const response = await fetch(`http://127.0.0.1:${dispatcher.port}/metrics`);
    expect(response.status).toBe(200);
    const text = await response.text();
    // a histogram's samples are its _bucket, _sum and _count series
    exported = new Set(PROMETHEUS_OWN);
    for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
      if (type === 'histogram')
        for (const suffix of ['_bucket', '_sum', '_count']) exported.add(name! + suffix);
      else exported.add(name!);
    }
  });

  afterAll(async () => {
    await dispatcher?.stop();
    await db?.drop();
  });

  it('exports every metric the alert rules use', () => {
    const used = rules.groups.flatMap((group) => group.rules.flatMap((rule) => metricNames(rule.expr)));
    expect(used).toContain('dispatcher_oldest_due_age_seconds');
    expect(used.filter((name) => !exported.has(name))).toEqual([]);
  });

  it('exports every metric the dashboard queries', () => {
    const used = (dashboard.panels ?? []).flatMap((panel) =>
      (panel.targets ?? []).flatMap((target) => (target.expr ? metricNames(target.expr) : [])),
    );
    expect(used).toContain('dispatcher_attempt_duration_seconds_bucket');
    expect(used.filter((name) => !exported.has(name))).toEqual([]);
  });

  it('has the tables and columns the dashboard’s Postgres queries read', async () => {
    const queries = (dashboard.panels ?? []).flatMap((panel) =>
      (panel.targets ?? []).flatMap((target) => (target.rawSql ? [target.rawSql] : [])),
    );
    expect(queries.length).toBeGreaterThan(0);
    for (const sql of queries) await db.knex.raw(sql);
  });
});
