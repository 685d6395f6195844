/**
 * The p50/p95 request duration from the per-minute figures `webhook_attempt_stats` (one row per
 * registration, minute and latency bucket), as SQL fragments: the health read and the series read
 * both compose them, so both answer the same percentile. Two steps, since a window function
 * cannot sit inside an aggregate: `requestRunningCounts` (per bucket) under
 * `latencyPercentileBuckets` (per group), then `latencyBucketUpperMs` for the bucket's duration.
 */

/**
 * The duration a latency bucket of `webhook_attempt_stats` stands for, in SQL: its upper bound
 * 1.1^(b+1) - 1 ms, to 0.1 ms (`webhooks_complete` writes bucket floor(ln(ms + 1) / ln(1.1))).
 */
export const latencyBucketUpperMs = (bucket: string) =>
  `round((power(1.1, ${bucket} + 1) - 1)::numeric, 1)::float8`;

/**
 * Window columns `sent_upto` (requests sent in buckets up to this one) and `sent` (all requests
 * sent) within each `partition`, for rows of one latency bucket each: `bucket` and `attempts`
 * name their columns. Bucket -1 is an attempt that sent no request, so it counts for neither.
 */
export const requestRunningCounts = ({
  bucket,
  attempts,
  partition,
}: {
  bucket: string;
  attempts: string;
  partition: string;
}) => {
  const requests = `sum(case when ${bucket} >= 0 then ${attempts} else 0 end)`;
  return (
    `${requests} over (partition by ${partition} order by ${bucket}) as sent_upto, ` +
    `${requests} over (partition by ${partition}) as sent`
  );
};

/**
 * Aggregates `p50_bucket` and `p95_bucket` over rows with `bucket`, `attempts` and
 * `requestRunningCounts`' columns: the lowest bucket holding requests where the running count
 * reaches 50 % / 95 % of the requests sent; null where none was sent.
 */
export const latencyPercentileBuckets = (
  [
    ['p50_bucket', '0.50'],
    ['p95_bucket', '0.95'],
  ] as const
)
  .map(
    ([name, share]) =>
      `min(bucket) filter (where bucket >= 0 and attempts > 0 and sent_upto >= ${share} * sent) as ${name}`,
  )
  .join(', ');
