import { formatDateTime, formatRelative } from '../../lib/format';
import { useNow } from './use-now';

/** An instant as local date and time, with how long ago (or how far ahead) it is. */
export function DateTime({
  value,
  relative = false,
}: {
  value: string | null | undefined;
  relative?: boolean;
}) {
  const now = useNow(relative ? 5000 : null);
  if (!value) return <span className="muted">—</span>;
  return (
    <span className="date-time">
      <time dateTime={value} title={value}>
        {formatDateTime(value)}
      </time>
      {relative && <span className="muted date-time__relative"> ({formatRelative(value, now)})</span>}
    </span>
  );
}
