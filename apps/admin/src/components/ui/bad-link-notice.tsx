import { Link } from '../../lib/router';

/**
 * Above a list whose address asked for what it cannot read: what was left out and why, and a link
 * to the address as read. Nothing when `problems` is empty.
 */
export function BadLinkNotice({
  problems,
  asRead,
  noun,
}: {
  problems: string[];
  asRead: string;
  noun: string;
}) {
  if (problems.length === 0) return null;
  return (
    <div className="notice notice--warn" role="alert" data-testid="bad-link">
      <p>
        This address asks for what the console cannot read, so it was left out and the {noun} are not filtered
        by it: {problems.join('; ')}.
      </p>
      <Link to={asRead}>Show the address as read</Link>
    </div>
  );
}
