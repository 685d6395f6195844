import { Agent, request } from 'node:http';
import { readIncoming } from '../support/http';

/** A request exactly as a hostile client sends it: the path unnormalised, headers as given. */
export interface RawRequest {
  method: string;
  /** Path and query, sent as they are (fetch would resolve `..` and re-encode). */
  path: string;
  /** A value list sends the header once per value. */
  headers: Record<string, string | string[]>;
  body?: Buffer;
  /** Send the body in chunks without a Content-Length. */
  chunked?: boolean;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** Milliseconds from sending to the end of the answer. */
  ms: number;
}

/** A keep-alive HTTP/1.1 client for one origin, for many requests in parallel. */
export function rawClient(baseUrl: string, options: { maxSockets?: number; timeoutMs?: number } = {}) {
  const url = new URL(baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: options.maxSockets ?? 16 });
  const timeoutMs = options.timeoutMs ?? 15_000;

  function send(raw: RawRequest): Promise<RawResponse> {
    const started = performance.now();
    return new Promise((resolve, reject) => {
      const headers: Record<string, string | string[]> = { ...raw.headers };
      if (raw.body && !raw.chunked) headers['content-length'] = String(raw.body.length);
      // node frames a body of GET and DELETE only when told to
      if (raw.body && raw.chunked) headers['transfer-encoding'] = 'chunked';
      const req = request(
        { host: url.hostname, port: url.port, method: raw.method, path: raw.path, headers, agent },
        (res) =>
          void readIncoming(res).then(
            (answer) => resolve({ ...answer, ms: performance.now() - started }),
            reject,
          ),
      );
      req.setTimeout(timeoutMs, () =>
        req.destroy(new Error(`no answer within ${timeoutMs} ms: ${raw.method} ${raw.path.slice(0, 200)}`)),
      );
      req.on('error', reject);
      if (raw.body && raw.chunked) {
        const size = Math.max(1, Math.ceil(raw.body.length / 3));
        for (let offset = 0; offset < raw.body.length; offset += size) {
          req.write(raw.body.subarray(offset, offset + size));
        }
      } else if (raw.body) {
        req.write(raw.body);
      }
      req.end();
    });
  }

  return { send, close: () => agent.destroy() };
}

/**
 * Percent-encodes every byte of the UTF-8 form of `text` outside the RFC 3986 unreserved set. A
 * lone surrogate becomes U+FFFD's bytes, as a browser would send it (encodeURIComponent throws).
 */
export function percentEncode(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const char = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}
