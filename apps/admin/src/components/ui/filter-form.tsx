import type { FormEvent, ReactNode } from 'react';
import { Button } from './button';

/**
 * The filter form of a list (`role="search"`): its fields, then quick choices (if any) on the
 * left and "Clear filters" and "Apply filters" on the right. Applied on submit.
 */
export function FilterForm({
  label,
  onSubmit,
  onClear,
  applyDisabled = false,
  quick,
  children,
}: {
  /** The form's accessible name: `Filter webhooks`. */
  label: string;
  onSubmit: () => void;
  onClear: () => void;
  applyDisabled?: boolean;
  /** Quick choices beside the buttons (a group of small buttons), or nothing. */
  quick?: ReactNode;
  /** The fields, in their row or grid. */
  children: ReactNode;
}) {
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onSubmit();
  };
  return (
    <form className="filters card" onSubmit={submit} aria-label={label} role="search">
      {children}
      <div className="filters__actions">
        {quick ?? <span />}
        <div className="filters__buttons">
          <Button onClick={onClear}>Clear filters</Button>
          <Button type="submit" variant="primary" disabled={applyDisabled}>
            Apply filters
          </Button>
        </div>
      </div>
    </form>
  );
}
