import { z } from 'zod';
import { AppError, type FieldErrors } from './errors';

type AnySchema = z.core.$ZodType;

/** The object schema behind wrappers (optional, nullable, default, pipe), if any. */
function unwrap(schema: AnySchema): AnySchema {
  const def = schema._zod.def as unknown as Record<string, unknown> & { type: string };
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'readonly':
    case 'catch':
    case 'nonoptional':
      return unwrap(def.innerType as AnySchema);
    case 'pipe':
      return unwrap(def.in as AnySchema);
    default:
      return schema;
  }
}

/**
 * Renames the keys of `value` to the schema's spelling when they match case-insensitively
 * (`ShouldGroup` → `shouldGroup`, `pagesize` → `PageSize`), recursively. Unknown keys are kept,
 * so a strict schema still refuses and names them.
 */
export function normalizeKeys(schema: AnySchema, value: unknown): unknown {
  const inner = unwrap(schema);
  const def = inner._zod.def as unknown as Record<string, unknown> & { type: string };
  if (def.type === 'array' && Array.isArray(value)) {
    return value.map((item) => normalizeKeys(def.element as AnySchema, item));
  }
  if (def.type !== 'object' || typeof value !== 'object' || value === null || Array.isArray(value))
    return value;
  const shape = def.shape as Record<string, AnySchema>;
  const byLowerCase = new Map(Object.keys(shape).map((key) => [key.toLowerCase(), key]));
  const result: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const canonical = key in shape ? key : (byLowerCase.get(key.toLowerCase()) ?? key);
    const fieldSchema = shape[canonical];
    // a later exact match wins over an earlier case-insensitive one
    if (canonical in result && canonical !== key) continue;
    result[canonical] = fieldSchema ? normalizeKeys(fieldSchema, item) : item;
  }
  return result;
}

function pathOf(prefix: string, path: PropertyKey[]): string {
  const parts = [prefix, ...path.map(String)].filter(Boolean);
  return parts.join('.') || '(body)';
}

/** Zod issues as ProblemDetails `errors`: unknown keys are named one by one. */
export function issuesToFieldErrors(issues: z.core.$ZodIssue[], prefix = ''): FieldErrors {
  const errors: FieldErrors = {};
  const add = (field: string, message: string) => (errors[field] ??= []).push(message);
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) add(pathOf(prefix, [...issue.path, key]), 'Unknown field');
    } else if (issue.code === 'invalid_type' && issue.input === undefined) {
      add(pathOf(prefix, issue.path), 'Required');
    } else {
      add(pathOf(prefix, issue.path), issue.message);
    }
  }
  return errors;
}

/** Parses `value` with `schema` after key normalisation; a failure is a 400 naming every field. */
export function parseInput<S extends z.ZodType>(
  schema: S,
  value: unknown,
  where: string,
  prefix = '',
): z.output<S> {
  const result = schema.safeParse(normalizeKeys(schema, value));
  if (result.success) return result.data;
  const errors = issuesToFieldErrors(result.error.issues, prefix);
  const fields = Object.keys(errors);
  throw new AppError('ValidationFailed', `Invalid ${where}: ${fields.slice(0, 10).join(', ')}`, errors);
}

/** A query-string boolean: `true`/`false` in any case, also `1`/`0`. */
export const queryBoolean = z
  .string()
  .trim()
  .toLowerCase()
  .pipe(z.enum(['true', 'false', '1', '0']))
  .transform((v) => v === 'true' || v === '1');

/** A positive int32 id in a path. */
export const pathId = z.coerce
  .number({ error: 'must be a whole number' })
  .int('must be a whole number')
  .min(1, 'must be at least 1')
  .max(2147483647, 'must fit in 32 bits');
