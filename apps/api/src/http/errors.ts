/**
 * The one error type of the API. Services throw `new AppError('NotFound', 'Account 7 does not exist')`;
 * the error middleware renders it as ProblemDetails with the status of its code.
 */
export const ERROR_CODES = {
  BadRequest: { status: 400, title: 'Bad request' },
  ValidationFailed: { status: 400, title: 'One or more fields are invalid' },
  Forbidden: { status: 403, title: 'Forbidden' },
  NotFound: { status: 404, title: 'Not found' },
  MethodNotAllowed: { status: 405, title: 'Method not allowed' },
  NotAcceptable: { status: 406, title: 'Not acceptable' },
  Conflict: { status: 409, title: 'Conflict' },
  PayloadTooLarge: { status: 413, title: 'Payload too large' },
  UnsupportedMediaType: { status: 415, title: 'Unsupported media type' },
  TooManyRequests: { status: 429, title: 'Too many requests' },
  Internal: { status: 500, title: 'Internal server error' },
  NotImplemented: { status: 501, title: 'Not implemented' },
  ServiceUnavailable: { status: 503, title: 'Service unavailable' },
} as const;
export type ErrorCode = keyof typeof ERROR_CODES;

/** Field path → messages, as in ProblemDetails `errors`. */
export type FieldErrors = Record<string, string[]>;

export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    readonly detail?: string,
    readonly errors?: FieldErrors,
    /** Extra response headers, such as `Retry-After`. */
    readonly headers?: Record<string, string>,
  ) {
    super(detail ?? ERROR_CODES[code].title);
    this.name = 'AppError';
    this.status = ERROR_CODES[code].status;
  }
}

/** A 400 naming one invalid field. */
export function fieldError(field: string, message: string): AppError {
  return new AppError('ValidationFailed', `${field}: ${message}`, { [field]: [message] });
}

/**
 * Raised by authentication when a request carries no valid token. Rendered as a bare 401 with
 * `WWW-Authenticate`, never a body (docs/decisions.md#api-conventions).
 */
export class UnauthenticatedError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'UnauthenticatedError';
  }
}
