import { z } from 'zod';

/** RFC 9457 problem details, as every 4xx/5xx except 401 carries it. */
export const ProblemDetails = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string().optional(),
    instance: z.string().optional(),
    errors: z.record(z.string(), z.array(z.string())).optional(),
    traceId: z
      .string()
      .optional()
      .meta({ description: 'The request’s id (`x-request-id`), to find it in the API’s log.' }),
  })
  .meta({ id: 'ProblemDetails' });
export type ProblemDetails = z.infer<typeof ProblemDetails>;

/** The `type` of a ProblemDetails: this base and the status. */
export const PROBLEM_TYPE_BASE = 'https://httpstatuses.io/';

/** The socket of a request Node's HTTP parser refused (structurally `net.Socket`). */
interface ClientSocket {
  writable: boolean;
  write(data: string): unknown;
  destroy(error?: Error): unknown;
  end(): unknown;
}

/** What the parser's error codes mean to a client: the status and detail answered. */
const CLIENT_ERRORS: Record<string, { status: number; title: string; detail: string }> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    title: 'Request header fields too large',
    detail: 'The request line and headers together exceed 16 KiB',
  },
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: 408,
    title: 'Request timeout',
    detail: 'The request did not arrive in time',
  },
};

/**
 * A `clientError` listener for `http.Server`: what Node answers itself, before any handler runs,
 * for a request it cannot parse, as a ProblemDetails instead of a bare status line. A head over
 * 16 KiB gets 431, a request too slow 408, any other unparsable request 400; a socket already
 * closed (a reset) is destroyed without an answer, as Node's default does.
 */
export function answerClientError(error: Error & { code?: string }, socket: ClientSocket): void {
  if (!socket.writable || error.code === 'ECONNRESET') {
    socket.destroy(error);
    return;
  }
  const known = CLIENT_ERRORS[error.code ?? ''] ?? {
    status: 400,
    title: 'Bad request',
    detail: 'The request is not valid HTTP/1.1',
  };
  const body = JSON.stringify({
    type: `${PROBLEM_TYPE_BASE}${known.status}`,
    title: known.title,
    status: known.status,
    detail: known.detail,
  });
  socket.write(
    `HTTP/1.1 ${known.status} ${known.title}\r\ncontent-type: application/problem+json\r\n` +
      `content-length: ${new TextEncoder().encode(body).length}\r\nconnection: close\r\n\r\n${body}`,
  );
  socket.end();
}
