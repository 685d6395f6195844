import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ObservedStatus } from './status-recorder';

/**
 * The check behind "every status a route's tests observe is in its OpenAPI entry": the
 * observations of the shared test client (`status-recorder.ts`) are matched to a route template of
 * the Gen2 or Gen1 document, and each (method, template, status) must be a response of that
 * operation. A request that matches no operation (an unknown path or method) is not a route's
 * answer and is not checked, nor is a 5xx (an internal failure, which any route may answer).
 */
export interface StatusGap {
  method: string;
  /** The OpenAPI path template, e.g. `/api/accounts/{id}`. */
  template: string;
  status: number;
}

type Paths = Record<string, Record<string, { responses?: Record<string, unknown> } | undefined>>;

interface Template {
  template: string;
  pattern: RegExp;
  /** Literal segments: `/api/accounts/search` wins over `/api/accounts/{id}`. */
  literals: number;
  operations: Paths[string];
}

function templatesOf(paths: Paths): Template[] {
  return Object.entries(paths).map(([template, operations]) => {
    const segments = template.split('/');
    const pattern = new RegExp(
      `^${segments
        .map((segment) =>
          /^\{\w+\}$/.test(segment) ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
        )
        .join('/')}/?$`,
    );
    return {
      template,
      pattern,
      literals: segments.filter((s) => !s.startsWith('{')).length,
      operations,
    };
  });
}

function documented(responses: Record<string, unknown>, status: number): boolean {
  return String(status) in responses || `${String(status)[0]}XX` in responses || 'default' in responses;
}

/** The observed (method, template, status) no operation documents, sorted and without repeats. */
export function undocumentedStatuses(
  observed: readonly ObservedStatus[],
  documents: readonly { paths?: unknown }[],
): StatusGap[] {
  const templates = documents
    .flatMap((document) => templatesOf((document.paths ?? {}) as Paths))
    .sort((a, b) => b.literals - a.literals);
  const gaps = new Map<string, StatusGap>();
  for (const { method, path, status } of observed) {
    // a server fault (5xx) is no route's contract: the error middleware answers it for any route
    if (status >= 500) continue;
    // the most literal template that matches is the route, as the router decides (a GET of
    // /api/accounts/unblock-recovery-code is a 405 of that POST-only path, not an account read)
    const match = templates.find((t) => t.pattern.test(path));
    const operation = match?.operations[method.toLowerCase()];
    if (!match || !operation) continue;
    if (documented(operation.responses ?? {}, status)) continue;
    const gap = { method, template: match.template, status };
    gaps.set(formatGap(gap), gap);
  }
  return [...gaps.values()].sort((a, b) => formatGap(a).localeCompare(formatGap(b)));
}

export const formatGap = (gap: StatusGap): string => `${gap.method} ${gap.template} ${gap.status}`;

/** The doc page that lists the gaps not fixed yet, one `- METHOD /template STATUS` line each. */
export const KNOWN_GAPS_PAGE = join(
  import.meta.dirname,
  '..',
  '..',
  '..',
  '..',
  'docs',
  'openapi-status-gaps.md',
);

export function knownGaps(page = KNOWN_GAPS_PAGE): Set<string> {
  const text = readFileSync(page, 'utf8');
  return new Set([...text.matchAll(/^- `((?:GET|POST|PUT|PATCH|DELETE) \S+ \d{3})`/gm)].map((m) => m[1]!));
}
