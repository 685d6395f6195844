import type { Page } from '@platform/shared';
import { formatCount } from '../../lib/format';
import { Button } from './button';

interface PaginationProps {
  page: Pick<
    Page<unknown>,
    'pageNumber' | 'totalPages' | 'totalCount' | 'totalCountCapped' | 'hasPreviousPage' | 'hasNextPage'
  >;
  /** What the list holds, plural: `webhooks` (one: the same without its final `s`, unless `one` says). */
  noun: string;
  one?: string;
  onPageChange: (pageNumber: number) => void;
  /** Data of another page is shown while the asked one loads. */
  loading?: boolean;
}

/** Previous/next paging of a server-side paginated list, with where the operator is. */
export function Pagination({ page, noun, one, onPageChange, loading = false }: PaginationProps) {
  const totalPages = Math.max(page.totalPages, 1);
  // a capped count (a search's) says "at least": 10,000+
  const counted = `${formatCount(page.totalCount)}${page.totalCountCapped ? '+' : ''} ${page.totalCount === 1 ? (one ?? noun.replace(/s$/, '')) : noun}`;
  if (totalPages === 1 && page.pageNumber === 1) {
    return (
      <p className="pagination pagination__status" data-testid="pagination-status">
        {counted}
      </p>
    );
  }
  return (
    <nav className="pagination" aria-label={`Pages of ${noun}`}>
      <Button
        size="small"
        onClick={() => onPageChange(page.pageNumber - 1)}
        disabled={!page.hasPreviousPage || loading}
      >
        ← Previous
      </Button>
      <span className="pagination__status" aria-live="polite" data-testid="pagination-status">
        Page {Math.min(page.pageNumber, totalPages)} of {totalPages} · {counted}
      </span>
      <Button
        size="small"
        onClick={() => onPageChange(page.pageNumber + 1)}
        disabled={!page.hasNextPage || loading}
      >
        Next →
      </Button>
    </nav>
  );
}

/** The "Per page" choice of a paginated list, among the sizes the list offers. */
export function PageSizeSelect({
  value,
  sizes,
  onChange,
}: {
  value: number;
  sizes: readonly number[];
  onChange: (pageSize: number) => void;
}) {
  return (
    <label className="page-size">
      Per page
      <select value={value} onChange={(e) => onChange(Number(e.target.value))}>
        {sizes.map((size) => (
          <option key={size} value={size}>
            {size}
          </option>
        ))}
      </select>
    </label>
  );
}
