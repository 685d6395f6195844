import { useEffect, useId, useRef, type ReactNode } from 'react';
import { CopyButton } from '../../../components/ui/copy-button';

/**
 * A signing secret shown this once (the API never returns it again), with a copy button: after
 * a create and after a rotation. Focus moves to its heading so keyboard and screen-reader users
 * meet it first.
 */
export function OnceSecretPanel({
  title,
  level,
  testId,
  secret,
  secretLabel,
  intro,
  children,
}: {
  title: string;
  /** The heading's level where the panel stands (a page section: 2; inside one: 3). */
  level: 2 | 3;
  testId: string;
  secret: string;
  /** The secret's accessible name: `Signing secret`. */
  secretLabel: string;
  /** What to do with it, above the secret. */
  intro: ReactNode;
  /** What follows the secret: how long the old one verifies, where to go next. */
  children: ReactNode;
}) {
  const headingRef = useRef<HTMLHeadingElement>(null);
  const headingId = useId();
  useEffect(() => headingRef.current?.focus(), []);
  const Heading = level === 2 ? 'h2' : 'h3';
  return (
    <section className="card secret-panel" aria-labelledby={headingId} data-testid={testId}>
      <Heading id={headingId} ref={headingRef} tabIndex={-1} className="section__title">
        {title}
      </Heading>
      <p>{intro}</p>
      <div className="secret">
        <code className="secret__value" data-testid="signing-secret" aria-label={secretLabel}>
          {secret}
        </code>
        <CopyButton text={secret} label="Copy secret" />
      </div>
      {children}
    </section>
  );
}
