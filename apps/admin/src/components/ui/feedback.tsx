import type { ReactNode } from 'react';
import { errorMessage, retryable } from '../../lib/api-client';
import { Link } from '../../lib/router';
import { Button } from './button';
import { PageHeader } from './page-header';

/** A loading placeholder announced to screen readers. */
export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <p className="loading" role="status">
      <span className="spinner" aria-hidden="true" />
      {label}
    </p>
  );
}

/** What to show when a list or a section has nothing in it yet. */
export function EmptyState({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="empty-state" data-testid="empty-state">
      <p className="empty-state__title">{title}</p>
      {children && <div className="empty-state__body">{children}</div>}
    </div>
  );
}

/**
 * A failed load: what went wrong (the ProblemDetails detail when there is one, a server error's
 * trace id) and a way to retry, unless asking again cannot help (a 404, a 403).
 */
export function ErrorState({
  error,
  title = 'This could not be loaded',
  onRetry,
}: {
  error: unknown;
  title?: string;
  onRetry?: () => void;
}) {
  return (
    <div className="error-state" role="alert" data-testid="error-state">
      <p className="error-state__title">{title}</p>
      <p>{errorMessage(error)}</p>
      {onRetry && retryable(error) && (
        <Button size="small" onClick={onRetry}>
          Try again
        </Button>
      )}
    </div>
  );
}

/** A detail page whose record failed to load: its header, the error with a retry, and the way back. */
export function PageLoadError({
  title,
  error,
  onRetry,
  back,
}: {
  title: string;
  error: unknown;
  onRetry: () => void;
  back: { to: string; label: string };
}) {
  return (
    <>
      <PageHeader title={title} />
      <ErrorState error={error} onRetry={onRetry} />
      <p>
        <Link to={back.to}>{back.label}</Link>
      </p>
    </>
  );
}
