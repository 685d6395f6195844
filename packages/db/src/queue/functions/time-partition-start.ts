/**
 * The first id of day `p_day`'s partition: day d (days since 1970-01-01) holds ids
 * [d × 10^10, (d + 1) × 10^10) (docs/decisions.md#time-partitioning).
 */
export const TIME_PARTITION_START_FUNCTION = `
    create or replace function time_partition_start(p_day date) returns bigint
    language sql immutable as $$
      select (p_day - date '1970-01-01')::bigint * 10000000000
    $$;
`;
