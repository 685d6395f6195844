/**
 * Creates the partitions of `p_table` for `p_day` and the `p_ahead` days after it, each as a
 * plain table then attached (SHARE UPDATE EXCLUSIVE on the parent: reads and writes go on, where
 * `create table ... partition of` would take ACCESS EXCLUSIVE), and moves the table's id sequence
 * forward to the start of `p_day`'s range, so the rows written from then on land in that day's
 * partition. Answers the partitions it created.
 */
export const TIME_PARTITIONS_ENSURE_FUNCTION = `
    create or replace function time_partitions_ensure(p_table text, p_day date, p_ahead int) returns text[]
    language plpgsql as $$
    declare
      v_day date;
      v_name text;
      v_sequence text := pg_get_serial_sequence(p_table, 'id');
      v_last bigint;
      v_created text[] := '{}';
    begin
      for v_day in select d::date from generate_series(p_day, p_day + p_ahead, interval '1 day') d loop
        v_name := p_table || '_' || to_char(v_day, 'YYYYMMDD');
        if to_regclass(v_name) is null then
          execute format('create table %I (like %I including all)', v_name, p_table);
          execute format('alter table %I attach partition %I for values from (%s) to (%s)',
                         p_table, v_name, time_partition_start(v_day), time_partition_start(v_day + 1));
          v_created := v_created || v_name;
        end if;
      end loop;
      -- forward only: ids stay unique, and a day that is over keeps the ids it handed out
      execute format('select last_value from %s', v_sequence) into v_last;
      if v_last < time_partition_start(p_day) then
        perform setval(v_sequence, time_partition_start(p_day), false);
      end if;
      return v_created;
    end
    $$;
`;
