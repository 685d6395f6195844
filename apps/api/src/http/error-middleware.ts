import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { isDatabaseUnavailable, PgErrorCode, pgErrorCode } from '@platform/db';
import { PROBLEM_TYPE_BASE } from '@platform/shared';
import { AppError, ERROR_CODES, UnauthenticatedError, type ErrorCode } from './errors';

/** Statuses thrown by Koa and its body parser (ctx.throw, http-errors), mapped to our codes. */
const STATUS_TO_CODE: Record<number, ErrorCode> = {
  400: 'BadRequest',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  409: 'Conflict',
  413: 'PayloadTooLarge',
  415: 'UnsupportedMediaType',
  429: 'TooManyRequests',
};

/** Database errors a client can cause, translated instead of leaked; and a database that is away. */
function fromDatabaseError(error: unknown): AppError | undefined {
  if (isDatabaseUnavailable(error)) {
    // a transaction whose connection broke before its commit wrote nothing; the client may retry
    return new AppError('ServiceUnavailable', 'The database is unavailable; retry shortly', undefined, {
      'Retry-After': '1',
    });
  }
  switch (pgErrorCode(error)) {
    case PgErrorCode.UniqueViolation:
      return new AppError('Conflict', 'A record with the same unique value already exists');
    case PgErrorCode.ForeignKeyViolation:
      return new AppError('ValidationFailed', 'A referenced record does not exist');
    case PgErrorCode.CheckViolation:
    case PgErrorCode.NotNullViolation:
    case PgErrorCode.InvalidTextRepresentation:
    case PgErrorCode.NumericValueOutOfRange:
    case PgErrorCode.StringDataRightTruncation:
      return new AppError('ValidationFailed', 'A value is out of the range the field allows');
    default:
      return undefined;
  }
}

function fromHttpError(error: unknown): AppError | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { status, statusCode, expose, message, type } = error as Record<string, unknown>;
  const code = STATUS_TO_CODE[Number(status ?? statusCode)];
  if (!code) return undefined;
  if (type === 'entity.parse.failed') return new AppError('BadRequest', 'The request body is not valid JSON');
  if (type === 'entity.too.large') return new AppError('PayloadTooLarge', 'The request body is too large');
  return new AppError(code, expose && typeof message === 'string' ? message : undefined);
}

/**
 * Renders every error as RFC 9457 ProblemDetails (`application/problem+json`), a 401 as an empty
 * body with `WWW-Authenticate`, and anything unexpected as a bare 500 after logging it.
 */
export function errorMiddleware(logger: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined)
        throw new AppError('NotFound', `No route for ${ctx.path}`);
    } catch (error) {
      if (error instanceof UnauthenticatedError) {
        // the type and body before the status: Koa turns a null body set after a non-empty
        // status into a 204 (and a null JSON body into the text "null")
        ctx.remove('Content-Type');
        ctx.body = null;
        ctx.status = 401;
        ctx.set('WWW-Authenticate', 'Bearer realm="api", error="invalid_token"');
        return;
      }
      let appError = error instanceof AppError ? error : (fromDatabaseError(error) ?? fromHttpError(error));
      if (!appError) {
        logger.error(
          { err: error, method: ctx.method, path: ctx.path, requestId: ctx.state.requestId },
          'unhandled error',
        );
        appError = new AppError('Internal');
      }
      const { title } = ERROR_CODES[appError.code];
      ctx.status = appError.status;
      for (const [name, value] of Object.entries(appError.headers ?? {})) ctx.set(name, value);
      ctx.type = 'application/problem+json';
      ctx.body = {
        type: `${PROBLEM_TYPE_BASE}${appError.status}`,
        title,
        status: appError.status,
        detail: appError.detail ?? title,
        instance: ctx.path,
        ...(appError.errors ? { errors: appError.errors } : {}),
        traceId: ctx.state.requestId,
      };
    }
  };
}
