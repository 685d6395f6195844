/** Postgres SQLSTATE codes the application translates instead of leaking. */
export const PgErrorCode = {
  UniqueViolation: '23505',
  ForeignKeyViolation: '23503',
  CheckViolation: '23514',
  NotNullViolation: '23502',
  InvalidTextRepresentation: '22P02',
  NumericValueOutOfRange: '22003',
  StringDataRightTruncation: '22001',
  LockNotAvailable: '55P03',
} as const;

/** The SQLSTATE of a database error, or undefined for anything else. */
export function pgErrorCode(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error) {
    const code = (error as { code: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return undefined;
}

/**
 * Whether `error` says the database cannot be reached right now (it is down, restarting, or every
 * pooled connection is busy), rather than that a statement was wrong: connection exceptions
 * (SQLSTATE class 08), a shutting-down or starting server (57P01–57P03), a refused or dropped
 * socket, a connection pg saw end, or knex giving up waiting for a pooled connection.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, name, message } = error as { code?: unknown; name?: unknown; message?: unknown };
  if (typeof code === 'string') {
    if (code.startsWith('08') || ['57P01', '57P02', '57P03'].includes(code)) return true;
    if (['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT'].includes(code)) return true;
  }
  if (name === 'KnexTimeoutError') return true;
  return typeof message === 'string' && /^Connection terminated/.test(message);
}
