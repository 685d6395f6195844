import { Fragment } from 'react';

/** A URL's origin (`https://host:port`) and the rest (path, query), or the whole text as the rest. */
export function splitUrl(url: string): { scheme: string; host: string; rest: string } {
  const match = /^([a-z][a-z\d+.-]*:\/\/)([^/?#]*)(.*)$/i.exec(url);
  return match
    ? { scheme: match[1]!, host: match[2]!, rest: match[3]! }
    : { scheme: '', host: '', rest: url };
}

/**
 * A target URL that breaks where a reader expects: never inside its host (the origin stays on one
 * line while it fits), and in the path after each `/`, `?` or `&` (a very long segment anywhere, so
 * a table column or a phone card never grows wider than the screen).
 */
export function TargetUrl({ url, className, testId }: { url: string; className?: string; testId?: string }) {
  const { scheme, host, rest } = splitUrl(url);
  const pieces = rest.split(/(?<=[/?&])/);
  return (
    <span className={['url', className].filter(Boolean).join(' ')} data-testid={testId}>
      {host && (
        <span className="url__origin">
          {scheme}
          <span className="url__host">{host}</span>
        </span>
      )}
      <span className="url__rest">
        {pieces.map((piece, index) => (
          <Fragment key={index}>
            {piece}
            {index < pieces.length - 1 && <wbr />}
          </Fragment>
        ))}
      </span>
    </span>
  );
}
