import { useSyncExternalStore, type AnchorHTMLAttributes, type MouseEvent } from 'react';

/** Where the console is served (Vite `base`): `/admin/`. */
const BASE = import.meta.env.BASE_URL;

/** The console path (`/webhooks/5`) of a browser pathname under `base` (`/admin/webhooks/5`). */
export function stripBase(pathname: string, base: string): string {
  const root = base.endsWith('/') ? base.slice(0, -1) : base;
  if (pathname === root) return '/';
  if (root && pathname.startsWith(`${root}/`)) return pathname.slice(root.length) || '/';
  return pathname || '/';
}

/** The browser URL of a console path (`/webhooks?page=2` → `/admin/webhooks?page=2`). */
export function withBase(to: string, base: string): string {
  const root = base.endsWith('/') ? base.slice(0, -1) : base;
  return `${root}${to.startsWith('/') ? to : `/${to}`}`;
}

export interface Location {
  /** The console path, from `/`. */
  path: string;
  /** The query string with its `?`, or empty. */
  search: string;
}

const listeners = new Set<() => void>();
let cached: Location | undefined;
let cachedKey = '';

function readLocation(): Location {
  const key = `${window.location.pathname}${window.location.search}`;
  if (!cached || key !== cachedKey) {
    cachedKey = key;
    cached = { path: stripBase(window.location.pathname, BASE), search: window.location.search };
  }
  return cached;
}

function notify(): void {
  for (const listener of [...listeners]) listener();
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  if (listeners.size === 1) window.addEventListener('popstate', notify);
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0) window.removeEventListener('popstate', notify);
  };
}

/** Goes to a console path (`/webhooks/5`), adding a history entry unless `replace`. */
export function navigate(to: string, options: { replace?: boolean } = {}): void {
  const url = withBase(to, BASE);
  if (options.replace) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
  notify();
}

/** The current console location; re-renders on navigation and on back/forward. */
export function useLocation(): Location {
  return useSyncExternalStore(subscribe, readLocation);
}

/** The query parameters of the current location. */
export function useSearchParams(): URLSearchParams {
  const { search } = useLocation();
  return new URLSearchParams(search);
}

type LinkProps = Omit<AnchorHTMLAttributes<HTMLAnchorElement>, 'href'> & { to: string };

/**
 * A real link (middle-click, copy address and screen readers work) that navigates in place on a
 * plain left click.
 */
export function Link({ to, onClick, ...props }: LinkProps) {
  const handleClick = (event: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(event);
    if (
      event.defaultPrevented ||
      event.button !== 0 ||
      event.metaKey ||
      event.ctrlKey ||
      event.shiftKey ||
      event.altKey ||
      props.target
    ) {
      return;
    }
    event.preventDefault();
    navigate(to);
  };
  return <a href={withBase(to, BASE)} onClick={handleClick} {...props} />;
}
