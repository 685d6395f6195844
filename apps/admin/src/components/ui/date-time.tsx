import { formatDateTime, formatRelative, formatZone } from '../../lib/format';
import { useNow } from './use-now';

/**
 * An instant as date and time in the browser's zone, with the zone said (`UTC`, `UTC+01:00`) so
 * no time on a screen is ambiguous, and optionally how long ago (or how far ahead) it is. The
 * tooltip is the instant in UTC (ISO 8601), as the API answers it.
 */
export function DateTime({
  value,
  relative = false,
}: {
  value: string | null | undefined;
  relative?: boolean;
}) {
  const now = useNow(relative ? 5000 : null);
  if (!value) return <span className="muted">—</span>;
  const [day, clock] = formatDateTime(value).split(' ');
  return (
    <span className="date-time">
      <time dateTime={value} title={value}>
        <span className="date-time__day">{day}</span>{' '}
        <span className="date-time__clock">
          {clock} <span className="date-time__zone">{formatZone(value)}</span>
        </span>
      </time>
      {relative && <span className="muted date-time__relative"> ({formatRelative(value, now)})</span>}
    </span>
  );
}
