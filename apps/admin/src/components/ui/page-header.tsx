import type { ReactNode } from 'react';

/** The page title (the one `h1`) with optional actions beside it. */
export function PageHeader({
  title,
  children,
  meta,
}: {
  title: ReactNode;
  children?: ReactNode;
  meta?: ReactNode;
}) {
  return (
    <header className="page-header">
      <div className="page-header__text">
        <h1 className="page-header__title">{title}</h1>
        {meta && <div className="page-header__meta">{meta}</div>}
      </div>
      {children && <div className="page-header__actions">{children}</div>}
    </header>
  );
}
