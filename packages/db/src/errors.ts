/** Postgres SQLSTATE codes the application translates instead of leaking. */
export const PgErrorCode = {
  UniqueViolation: '23505',
  ForeignKeyViolation: '23503',
  CheckViolation: '23514',
  NotNullViolation: '23502',
  InvalidTextRepresentation: '22P02',
  NumericValueOutOfRange: '22003',
  StringDataRightTruncation: '22001',
} as const;

/** The SQLSTATE of a database error, or undefined for anything else. */
export function pgErrorCode(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error) {
    const code = (error as { code: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return undefined;
}
