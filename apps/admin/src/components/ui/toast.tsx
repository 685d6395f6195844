import {
  createContext,
  useCallback,
  useContext,
  useEffect,
  useMemo,
  useRef,
  useState,
  type ReactNode,
} from 'react';
import { useLocation } from '../../lib/router';

export type ToastTone = 'success' | 'error';

interface Toast {
  id: number;
  tone: ToastTone;
  message: string;
  /** The screen (browser pathname) it was shown on. */
  path: string;
}

interface ToastApi {
  success(message: string): void;
  error(message: string): void;
}

const ToastContext = createContext<ToastApi | null>(null);

/** How long a success stays; errors stay until dismissed, so they can be read and copied. */
const SUCCESS_MS = 6000;

/** Error toasts that were shown on another screen than `path` are gone; the rest stay. */
export function toastsForPath<T extends { tone: ToastTone; path: string }>(
  toasts: readonly T[],
  path: string,
): T[] {
  return toasts.filter((toast) => toast.tone !== 'error' || toast.path === path);
}

/**
 * Shows the outcome of operations. Successes are announced politely (role="status") and go by
 * themselves; errors are announced at once (role="alert") and stay until dismissed, or until the
 * operator goes to another screen (an error belongs to the screen it happened on).
 */
export function ToastProvider({ children }: { children: ReactNode }) {
  const [toasts, setToasts] = useState<Toast[]>([]);
  const nextId = useRef(1);
  // the browser's pathname, read when a toast is shown and when the screen changes
  const { path } = useLocation();
  useEffect(() => setToasts((all) => toastsForPath(all, window.location.pathname)), [path]);

  const dismiss = useCallback((id: number) => setToasts((all) => all.filter((t) => t.id !== id)), []);
  const push = useCallback(
    (tone: ToastTone, message: string) => {
      const id = nextId.current++;
      setToasts((all) => [...all.slice(-4), { id, tone, message, path: window.location.pathname }]);
      if (tone === 'success') window.setTimeout(() => dismiss(id), SUCCESS_MS);
    },
    [dismiss],
  );
  const api = useMemo<ToastApi>(
    () => ({ success: (m) => push('success', m), error: (m) => push('error', m) }),
    [push],
  );

  return (
    <ToastContext.Provider value={api}>
      {children}
      {/* one region that is always there, so screen readers announce what appears in it */}
      <section className="toasts" aria-label="Notifications" aria-live="polite">
        {toasts.map((toast) => (
          <div
            key={toast.id}
            className={`toast toast--${toast.tone}`}
            role={toast.tone === 'error' ? 'alert' : 'status'}
            data-testid={`toast-${toast.tone}`}
          >
            <p className="toast__message">{toast.message}</p>
            <button
              type="button"
              className="toast__close"
              aria-label="Dismiss notification"
              onClick={() => dismiss(toast.id)}
            >
              ×
            </button>
          </div>
        ))}
      </section>
    </ToastContext.Provider>
  );
}

/** Shows a success or an error notification. */
export function useToast(): ToastApi {
  const api = useContext(ToastContext);
  if (!api) throw new Error('useToast needs a ToastProvider');
  return api;
}
