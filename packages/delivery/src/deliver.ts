import type { LookupFunction } from 'node:net';
import { isPrivateHost } from '@platform/shared';
import { Agent, errors, request } from 'undici';
import { createSafeLookup, PrivateAddressError } from './safe-lookup';

/** First bytes of a target's answer kept for operators (docs/dispatcher.md#what-an-attempt-records). */
export const RESPONSE_EXCERPT_BYTES = 4096;

export interface DeliveryRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** The credential values this request carries, never stored: see `redactCredentials`. */
  credentials?: readonly string[];
}

/** The most of an answer's headers an attempt keeps (docs/dispatcher.md#what-an-attempt-records). */
export const RESPONSE_HEADERS_BYTES = 2048;

/** What stands in for a credential, in a stored answer and in the log (`logger.ts`). */
export const REDACTED = '[redacted]';

/**
 * `excerpt` with every credential its request carried replaced by `[redacted]`, as sent and
 * JSON-escaped. A target that echoes its request (a debug endpoint, an error page quoting it)
 * would otherwise have them stored in the attempt row, which every reader of webhooks sees:
 * credentials are write-only everywhere else, and a platform-signed bearer token grants reads.
 * When the excerpt was cut, a tail that begins a credential is redacted too.
 */
export function redactCredentials(excerpt: string, credentials: readonly string[]): string {
  return credentialRedactor(credentials)(excerpt);
}

/**
 * `redactCredentials` for one request's credentials, prepared once: a delivery redacts its body
 * excerpt and every header it sent and received with the same credentials, and most carry none.
 */
export function credentialRedactor(credentials: readonly string[]): (excerpt: string) => string {
  // longest first, so a value containing another (user:password) goes whole
  const forms = [
    ...new Set(
      credentials
        .filter((value) => value !== '')
        .flatMap((value) => [value, JSON.stringify(value).slice(1, -1)]),
    ),
  ].sort((a, b) => b.length - a.length);
  if (forms.length === 0) return (excerpt) => excerpt;
  return (excerpt) => {
    // whether the answer was cut: the excerpt keeps RESPONSE_EXCERPT_BYTES less at most 3 (a split
    // character); judged before redacting, which shortens it
    const cut = Buffer.byteLength(excerpt) >= RESPONSE_EXCERPT_BYTES - 3;
    let text = excerpt;
    for (const form of forms) text = text.replaceAll(form, REDACTED);
    if (cut) {
      for (const form of forms) {
        for (let length = Math.min(form.length - 1, text.length); length > 0; length--) {
          if (text.endsWith(form.slice(0, length))) {
            text = text.slice(0, -length) + REDACTED;
            break;
          }
        }
      }
    }
    return text;
  };
}

/** A request as it was sent, for the attempt's record: every credential it carried redacted. */
export interface SentRequest {
  url: string;
  headers: Record<string, string>;
}

/**
 * The record of what a delivery sent: its URL and headers, each header value with its credentials
 * replaced by `[redacted]` (`Basic [redacted]`, `Bearer [redacted]`), and the signatures of
 * `webhook-signature` too (`v1,[redacted]`): with the body they make a message the receiver
 * accepts, which a reader of attempts could send it again within its timestamp tolerance. The
 * body is left out: it is the webhook's own, rebuilt on read.
 */
export function sentRequest(
  delivery: DeliveryRequest,
  redact = credentialRedactor(delivery.credentials ?? []),
): SentRequest {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(delivery.headers)) {
    headers[name] =
      name.toLowerCase() === 'webhook-signature'
        ? value
            .split(' ')
            .map((signature) => signature.replace(/,.*$/s, `,${REDACTED}`))
            .join(' ')
        : redact(value);
  }
  return { url: delivery.url, headers };
}

/**
 * An answer's headers for the attempt's record, redacted like its body (a target may echo the
 * request), in the order received, at most RESPONSE_HEADERS_BYTES of names and values: the
 * headers past that are left out whole.
 */
export function answerHeaders(
  raw: Record<string, string | string[] | undefined>,
  redact: (text: string) => string,
): Record<string, string> {
  const kept: Record<string, string> = {};
  let size = 0;
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    const text = redact(Array.isArray(value) ? value.join(', ') : value);
    size += Buffer.byteLength(name) + Buffer.byteLength(text);
    if (size > RESPONSE_HEADERS_BYTES) break;
    kept[name] = text;
  }
  return kept;
}

/** What one HTTP try came to; `errorKind` is null exactly for a 2xx. */
export interface DeliveryOutcome {
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  errorKind:
    | 'status'
    | 'redirect'
    | 'timeout'
    | 'connection-refused'
    | 'connection-reset'
    | 'connection'
    | 'dns'
    | 'tls'
    | 'private-address'
    | 'invalid-url'
    /** The dispatcher could not build the request (set by the loop, never by the Deliverer). */
    | 'internal'
    /** The target's breaker is open: nothing was sent (set by the loop). */
    | 'circuit-open'
    /** The dispatcher holding this try stopped before it reported (set by the loop, on the next claim). */
    | 'interrupted'
    | null;
  responseBody: string | null;
  /** The request as sent (credentials redacted); absent or null when nothing was sent. */
  request?: SentRequest | null;
  /** The answer's headers (bounded, redacted); absent or null without an answer. */
  responseHeaders?: Record<string, string> | null;
  /** From `Retry-After` on a 429 or 503. */
  retryAfter?: string;
}

export interface DelivererOptions {
  timeoutMs: number;
  allowPrivateTargets: boolean;
  /** Connections kept per origin, so one slow target cannot take every slot. */
  connectionsPerOrigin: number;
  /**
   * The resolver target names go through (`dns.lookup` by default); with private targets
   * disallowed it is wrapped in the check that refuses private addresses. A split-horizon or
   * caching resolver goes here; tests use it to resolve names to chosen addresses.
   */
  lookup?: LookupFunction;
}

/** Why a request failed before any answer, from the error undici or the socket raised. */
function classify(
  error: unknown,
): Exclude<
  DeliveryOutcome['errorKind'],
  null | 'status' | 'redirect' | 'internal' | 'circuit-open' | 'interrupted'
> {
  if (
    error instanceof PrivateAddressError ||
    (error as { cause?: unknown })?.cause instanceof PrivateAddressError
  ) {
    return 'private-address';
  }
  if (
    error instanceof errors.HeadersTimeoutError ||
    error instanceof errors.BodyTimeoutError ||
    error instanceof errors.ConnectTimeoutError ||
    (error as Error)?.name === 'TimeoutError' ||
    (error as Error)?.name === 'AbortError'
  ) {
    return 'timeout';
  }
  const code = String(
    (error as { code?: unknown })?.code ?? (error as { cause?: { code?: unknown } })?.cause?.code ?? '',
  );
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'dns';
  // OpenSSL's own failures (https:// to a plain-HTTP port: ERR_SSL_WRONG_VERSION_NUMBER) are
  // ERR_SSL_*, Node's checks of the certificate ERR_TLS_* or the X509 names (…CERT…)
  if (
    code.startsWith('ERR_TLS') ||
    code.startsWith('ERR_SSL') ||
    code.includes('CERT') ||
    code === 'EPROTO'
  ) {
    return 'tls';
  }
  if (code === 'EPRIVATEADDRESS') return 'private-address';
  // told apart for operators: nothing listens (the target is down) versus the target took the
  // request and dropped the connection without answering (it crashed on it, or a proxy cut it)
  if (code === 'ECONNREFUSED') return 'connection-refused';
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET') return 'connection-reset';
  return 'connection';
}

/**
 * Reads at most RESPONSE_EXCERPT_BYTES of a body, then drops the rest without reading it. The
 * excerpt is stored in a Postgres text column, which refuses NUL characters: one binary answer
 * would fail the whole batch of results it is written with, so NULs become U+FFFD, like bytes that
 * are not UTF-8. A character split by the cut is left out, so the excerpt stays within 4 KiB.
 */
async function excerpt(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= RESPONSE_EXCERPT_BYTES) break;
  }
  body.destroy();
  const bytes = Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES);
  // stream: true holds back an incomplete trailing character instead of decoding it as U+FFFD
  return new TextDecoder('utf-8').decode(bytes, { stream: true }).replaceAll('\u0000', '\ufffd');
}

/**
 * POSTs deliveries over keep-alive pools, one per origin, bounded per origin. Redirects are never
 * followed (a 3xx fails the attempt), the whole exchange is bounded by `timeoutMs`, and unless
 * private targets are allowed every address a target resolves to is checked at connect time.
 */
export class Deliverer {
  private readonly agent: Agent;

  constructor(private readonly options: DelivererOptions) {
    this.agent = new Agent({
      connections: options.connectionsPerOrigin,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      connect: {
        timeout: options.timeoutMs,
        // no lookup option means undici's own (dns.lookup), as before
        ...(options.allowPrivateTargets
          ? options.lookup && { lookup: options.lookup }
          : { lookup: createSafeLookup(options.lookup) }),
      },
    });
  }

  async deliver(delivery: DeliveryRequest): Promise<DeliveryOutcome> {
    const startedAt = new Date();
    const started = performance.now();
    const done = (outcome: Omit<DeliveryOutcome, 'startedAt' | 'durationMs'>): DeliveryOutcome => ({
      startedAt,
      durationMs: Math.round(performance.now() - started),
      ...outcome,
    });
    let url: URL;
    try {
      url = new URL(delivery.url);
    } catch {
      return done({ statusCode: null, errorKind: 'invalid-url', responseBody: null });
    }
    // a literal address has nothing to resolve, so the lookup hook never sees it: checked here,
    // with localhost names, by the rule registration applies
    if (!this.options.allowPrivateTargets && isPrivateHost(url.hostname)) {
      return done({ statusCode: null, errorKind: 'private-address', responseBody: null });
    }
    // the whole exchange is bounded (undici's own timeouts are per phase: a body trickling a byte
    // at a time would outlive them); cleared at the end, since AbortSignal.timeout would keep each
    // request's signal, listeners and body alive for the full timeout
    const abort = new AbortController();
    const timer = setTimeout(
      () => abort.abort(new DOMException('delivery timed out', 'TimeoutError')),
      this.options.timeoutMs,
    );
    const redact = credentialRedactor(delivery.credentials ?? []);
    const sent = sentRequest(delivery, redact);
    try {
      const response = await request(url, {
        method: 'POST',
        headers: delivery.headers,
        body: delivery.body,
        dispatcher: this.agent,
        signal: abort.signal,
      });
      const statusCode = response.statusCode;
      const responseBody = redact(await excerpt(response.body));
      const ok = statusCode >= 200 && statusCode < 300;
      const retryAfter =
        statusCode === 429 || statusCode === 503 ? response.headers['retry-after'] : undefined;
      return done({
        statusCode,
        errorKind: ok ? null : statusCode >= 300 && statusCode < 400 ? 'redirect' : 'status',
        responseBody,
        request: sent,
        responseHeaders: answerHeaders(response.headers, redact),
        ...(typeof retryAfter === 'string' ? { retryAfter } : {}),
      });
    } catch (error) {
      const errorKind = classify(error);
      // refused at connect (a private address): nothing left the dispatcher
      return done({
        statusCode: null,
        errorKind,
        responseBody: null,
        request: errorKind === 'private-address' ? null : sent,
      });
    } finally {
      clearTimeout(timer);
    }
  }

  /** Closes the pools; in-flight requests finish first. */
  close(): Promise<void> {
    return this.agent.close();
  }
}
