import { Fragment, type ReactElement, type ReactNode } from 'react';

interface DataTableProps {
  /** The table's accessible name: `Operator actions`. */
  label: string;
  testId?: string;
  /** Modifiers after `table`: `table--stack` (rows stack into cards on narrow screens), … */
  className?: string;
  /** Data of another page is shown while the asked one loads. */
  busy?: boolean;
  /** The column headers: a string is a plain `<th scope="col">`; an element (a sort header, a select-all cell) is its own `<th>`. */
  columns: readonly (string | ReactElement)[];
  /** The rows. */
  children: ReactNode;
}

/** A table of a list, in its horizontally scrolling wrapper, with its column headers. */
export function DataTable({
  label,
  testId,
  className = 'table--stack',
  busy,
  columns,
  children,
}: DataTableProps) {
  return (
    <div className="table-wrap">
      <table className={`table ${className}`} aria-label={label} data-testid={testId} aria-busy={busy}>
        <thead>
          <tr>
            {columns.map((column, index) =>
              typeof column === 'string' ? (
                <th key={column} scope="col">
                  {column}
                </th>
              ) : (
                <Fragment key={index}>{column}</Fragment>
              ),
            )}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
