import { BACKLOG_STATUSES, type AttemptResult, type BacklogStatus, type QueueStats } from '@platform/db';
import { attemptSentRequest } from '@platform/shared';

// A small Prometheus registry written by hand: counters and histograms updated as things happen,
// gauges read when scraped, rendered in the text exposition format 0.0.4. A dozen series do not
// justify a client library (and its default collectors).

/** Content type of the text exposition format. */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

type Labels = Readonly<Record<string, string>>;

/** `"` `\` and newlines escaped, as label values must be. */
function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function formatLabels(labels: Labels): string {
  const entries = Object.entries(labels);
  if (entries.length === 0) return '';
  return `{${entries.map(([name, value]) => `${name}="${escapeLabelValue(value)}"`).join(',')}}`;
}

function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}

/** HELP text escapes only `\` and newlines. */
function header(name: string, type: string, help: string): string {
  return `# HELP ${name} ${help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}\n# TYPE ${name} ${type}\n`;
}

interface Metric {
  readonly name: string;
  render(): Promise<string> | string;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

/** A monotonically increasing count, one series per combination of its labels' values. */
export class Counter implements Metric {
  private readonly values = new Map<string, { labels: Labels; value: number }>();

  constructor(
    readonly name: string,
    private readonly help: string,
    private readonly labelNames: readonly string[] = [],
  ) {}

  /** Adds `by` (default 1) to the series of `labels`, which name exactly the counter's labels. */
  inc(labels: Labels = {}, by = 1): void {
    if (by < 0) throw new Error(`counter ${this.name} cannot decrease`);
    const names = Object.keys(labels);
    if (names.length !== this.labelNames.length || names.some((name) => !this.labelNames.includes(name))) {
      throw new Error(`counter ${this.name} takes the labels ${this.labelNames.join(', ') || '(none)'}`);
    }
    // one key per label set whatever order the caller wrote the labels in
    const sorted = Object.fromEntries(this.labelNames.map((name) => [name, labels[name]!]));
    const key = formatLabels(sorted);
    const series = this.values.get(key);
    if (series) series.value += by;
    else this.values.set(key, { labels: sorted, value: by });
  }

  /** The current value of one series (0 if it never counted). */
  get(labels: Labels = {}): number {
    const sorted = Object.fromEntries(this.labelNames.map((name) => [name, labels[name] ?? '']));
    return this.values.get(formatLabels(sorted))?.value ?? 0;
  }

  render(): string {
    // a counter without labels exists (at 0) from the first scrape; a labelled one has no series
    // until a label set is known
    if (this.values.size === 0 && this.labelNames.length === 0) {
      return `${header(this.name, 'counter', this.help)}${this.name} 0\n`;
    }
    const lines = [...this.values.values()].map(
      ({ labels, value }) => `${this.name}${formatLabels(labels)} ${formatValue(value)}\n`,
    );
    return header(this.name, 'counter', this.help) + lines.join('');
  }
}

/** A gauge's reading: one value, or one per label set. */
export type GaugeValue = number | readonly { labels: Labels; value: number }[];

/**
 * A value read at scrape time by `collect`, which may query the database. When it fails, the
 * gauge reports no sample (absent, rather than a stale or made-up number) and the error goes to
 * `onError`.
 */
export class Gauge implements Metric {
  constructor(
    readonly name: string,
    private readonly help: string,
    private readonly collect: () => GaugeValue | Promise<GaugeValue>,
    private readonly onError: (error: unknown, name: string) => void = () => {},
  ) {}

  async render(): Promise<string> {
    try {
      const value = await this.collect();
      const series = typeof value === 'number' ? [{ labels: {}, value }] : value;
      const lines = series.map(
        ({ labels, value }) => `${this.name}${formatLabels(labels)} ${formatValue(value)}\n`,
      );
      return header(this.name, 'gauge', this.help) + lines.join('');
    } catch (error) {
      this.onError(error, this.name);
      return header(this.name, 'gauge', this.help);
    }
  }
}

/** Counts of observations at or below each bucket bound, plus their sum and count. */
export class Histogram implements Metric {
  private readonly counts: number[];
  private sum = 0;
  private count = 0;

  constructor(
    readonly name: string,
    private readonly help: string,
    private readonly buckets: readonly number[],
  ) {
    if (buckets.some((bound, i) => i > 0 && bound <= buckets[i - 1]!)) {
      throw new Error(`buckets of ${name} must increase`);
    }
    this.counts = buckets.map(() => 0);
  }

  observe(value: number): void {
    // each observation lands in its first bucket only; rendering adds them up (le is cumulative)
    const index = this.buckets.findIndex((bound) => value <= bound);
    if (index >= 0) this.counts[index]!++;
    this.sum += value;
    this.count++;
  }

  render(): string {
    let cumulative = 0;
    const lines = this.buckets.map((bound, i) => {
      cumulative += this.counts[i]!;
      return `${this.name}_bucket{le="${formatValue(bound)}"} ${cumulative}\n`;
    });
    lines.push(`${this.name}_bucket{le="+Inf"} ${this.count}\n`);
    lines.push(`${this.name}_sum ${formatValue(this.sum)}\n`, `${this.name}_count ${this.count}\n`);
    return header(this.name, 'histogram', this.help) + lines.join('');
  }
}

/** Holds the metrics of one process and renders them in registration order. */
export class MetricsRegistry {
  private readonly metrics: Metric[] = [];

  constructor(private readonly onCollectError?: (error: unknown, name: string) => void) {}

  private add<T extends Metric>(metric: T): T {
    if (!NAME.test(metric.name)) throw new Error(`"${metric.name}" is not a metric name`);
    if (this.metrics.some((m) => m.name === metric.name)) throw new Error(`${metric.name} registered twice`);
    this.metrics.push(metric);
    return metric;
  }

  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    return this.add(new Counter(name, help, labelNames));
  }

  gauge(name: string, help: string, collect: () => GaugeValue | Promise<GaugeValue>): Gauge {
    return this.add(new Gauge(name, help, collect, this.onCollectError));
  }

  histogram(name: string, help: string, buckets: readonly number[]): Histogram {
    return this.add(new Histogram(name, help, buckets));
  }

  /** The exposition text; gauges are collected concurrently. */
  async render(): Promise<string> {
    return (await Promise.all(this.metrics.map((metric) => metric.render()))).join('');
  }
}

/**
 * Bounds of the attempt latency histogram, in seconds: from a same-rack answer (5 ms) to the
 * default delivery timeout (15 s) and a little past it, roughly ×2.5 apart.
 */
export const ATTEMPT_SECONDS_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30,
] as const;

/**
 * Where the counted queue gauges stop: past it they say "at least this many" (the oldest due age
 * keeps growing and is the better alarm then). Counting walks at most this many index entries per
 * scrape: 35–80 ms in the worst case measured (every entry needing a heap visit), see
 * docs/dispatcher.md.
 */
export const QUEUE_STATS_CAP = 50_000;

/** What the dispatcher's metrics read when scraped. */
export interface DispatcherMetricSources {
  listening(): boolean;
  loopAlive(): boolean;
  inFlight(): number;
  /** The queue gauges, from the database (`queueStats`). */
  queueStats(): Promise<QueueStats>;
  /** A gauge that could not be collected (the database is down, say). */
  onCollectError?(error: unknown, name: string): void;
}

/** The dispatcher's series (documented in docs/dispatcher.md) and the hooks that update them. */
export function createDispatcherMetrics(sources: DispatcherMetricSources) {
  const registry = new MetricsRegistry(sources.onCollectError);
  registry.gauge('dispatcher_up', 'Whether the dispatcher process is running.', () => 1);
  registry.gauge('dispatcher_listening', 'Whether the LISTEN connection is up.', () =>
    sources.listening() ? 1 : 0,
  );
  registry.gauge('dispatcher_loop_alive', 'Whether the claim loop is running and not stalled.', () =>
    sources.loopAlive() ? 1 : 0,
  );
  const notifications = registry.counter(
    'dispatcher_notifications_total',
    'Wake-up notifications received since start.',
  );
  const claims = registry.counter(
    'dispatcher_claims_total',
    'Claims this process ran, by kind: fair (the walk over every registration with due work) or notified ' +
      '(the rows a wake-up named, by primary key, while there was nothing else to claim).',
    ['kind'],
  );
  claims.inc({ kind: 'fair' }, 0);
  claims.inc({ kind: 'notified' }, 0);
  const deliveries = registry.counter(
    'dispatcher_deliveries_total',
    'Requests sent to targets by this process, by outcome: success, or the error kind of the failure. ' +
      'Attempts that sent no request are dispatcher_skipped_attempts_total.',
    ['outcome'],
  );
  deliveries.inc({ outcome: 'success' }, 0);
  const skippedAttempts = registry.counter(
    'dispatcher_skipped_attempts_total',
    'Attempts recorded without a request by this process, by reason: circuit-open (the breaker was open), ' +
      'interrupted, internal, private-address, invalid-url.',
    ['reason'],
  );
  skippedAttempts.inc({ reason: 'circuit-open' }, 0);
  const attemptSeconds = registry.histogram(
    'dispatcher_attempt_duration_seconds',
    'Duration of delivery attempts, from sending the request to the end of the response excerpt.',
    ATTEMPT_SECONDS_BUCKETS,
  );
  registry.gauge('dispatcher_deliveries_in_flight', 'Deliveries this process has in flight.', () =>
    sources.inFlight(),
  );
  // the three queue gauges come from one statement; a scrape renders them together and shares it
  let stats: Promise<QueueStats> | undefined;
  const queue = () => {
    stats ??= sources.queueStats().finally(() => (stats = undefined));
    return stats;
  };
  // by the registration's status: only `active` can be delivered; paused and disabled
  // registrations' webhooks wait for an operator, in series of their own
  const byStatus = (values: Record<BacklogStatus, number>) =>
    BACKLOG_STATUSES.map((status) => ({ labels: { status }, value: values[status] ?? 0 }));
  registry.gauge(
    'dispatcher_due_backlog',
    'Webhooks due and not claimed (Created or Retrying, next attempt passed), counted up to ' +
      `${QUEUE_STATS_CAP} per status of their registration: active (deliverable), paused, disabled.`,
    async () => byStatus((await queue()).due),
  );
  registry.gauge(
    'dispatcher_oldest_due_age_seconds',
    'How long the longest-waiting due webhook has been due, per status of its registration ' +
      '(active, paused, disabled); 0 when none is.',
    async () => byStatus((await queue()).oldestDueSeconds),
  );
  registry.gauge(
    'dispatcher_blocked_groups',
    `Groups held by a Failed webhook without continue-after-fail, counted up to ${QUEUE_STATS_CAP}.`,
    async () => (await queue()).blockedGroups,
  );
  const maintenanceRuns = registry.counter(
    'dispatcher_maintenance_runs_total',
    'Maintenance job runs by job and result: done, skipped (another replica held the job) or failed.',
    ['job', 'result'],
  );
  const prunedRows = registry.counter(
    'dispatcher_pruned_rows_total',
    'Rows deleted by the prune job, by table.',
    ['table'],
  );
  const repairedGroups = registry.counter(
    'dispatcher_repaired_groups_total',
    'Groups the repair sweep changed, by action: promoted (a stranded head) or recounted (open_count drift).',
    ['action'],
  );
  const disabledRegistrations = registry.counter(
    'dispatcher_registrations_disabled_total',
    'Registrations this process disabled, by reason: gone (a 410 answer) or failing (sustained failure).',
    ['reason'],
  );
  registry.gauge(
    'dispatcher_open_breakers',
    'Endpoints whose circuit breaker is open or half-open.',
    async () => (await queue()).openBreakers,
  );
  registry.gauge('process_resident_memory_bytes', 'Resident memory size in bytes.', () =>
    process.memoryUsage.rss(),
  );
  return {
    registry,
    notifications,
    claims,
    deliveries,
    skippedAttempts,
    maintenanceRuns,
    prunedRows,
    repairedGroups,
    disabledRegistrations,
    /**
     * Counts one recorded attempt: a request by outcome, with its duration observed, or a skip
     * (no request sent: `attemptSentRequest` of packages/shared) by reason.
     */
    recordAttempt(result: Pick<AttemptResult, 'errorKind' | 'durationMs'>): void {
      if (!attemptSentRequest(result.errorKind)) {
        skippedAttempts.inc({ reason: result.errorKind! });
        return;
      }
      deliveries.inc({ outcome: result.errorKind ?? 'success' });
      attemptSeconds.observe(result.durationMs / 1000);
    },
  };
}

export type DispatcherMetrics = ReturnType<typeof createDispatcherMetrics>;
