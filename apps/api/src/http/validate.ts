import { z } from 'zod';
import { AppError, type FieldErrors } from './errors';

type AnySchema = z.core.$ZodType;
type Path = (string | number)[];

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

interface ObjectFields {
  /** Field name → schema; own keys only: `constructor` or `__proto__` never find Object.prototype's members. */
  fields: Map<string, AnySchema>;
  /** Lower-cased field name → field name. */
  byLowerCase: Map<string, string>;
}

const fieldsBySchema = new WeakMap<AnySchema, ObjectFields>();

/** The fields of an object schema, worked out once per schema rather than on every request. */
function fieldsOf(schema: AnySchema, shape: Record<string, AnySchema>): ObjectFields {
  let known = fieldsBySchema.get(schema);
  if (!known) {
    const fields = new Map(Object.entries(shape));
    known = { fields, byLowerCase: new Map([...fields.keys()].map((key) => [key.toLowerCase(), key])) };
    fieldsBySchema.set(schema, known);
  }
  return known;
}

/** A field given more than once under spellings that differ only in case (`email` and `Email`). */
export interface KeyClash {
  path: Path;
  keys: string[];
}

/**
 * Renames the keys of `value` to the schema's spelling when they match case-insensitively
 * (`ShouldGroup` → `shouldGroup`, `pagesize` → `PageSize`), recursively. Unknown keys are kept,
 * so a strict schema still refuses and names them. A field given under two spellings is
 * ambiguous: the first one is kept and the clash is added to `clashes`, for the caller to refuse.
 */
export function normalizeKeys(
  schema: AnySchema,
  value: unknown,
  clashes: KeyClash[] = [],
  path: Path = [],
): unknown {
  const inner = unwrap(schema);
  const def = inner._zod.def as unknown as Record<string, unknown> & { type: string };
  if (def.type === 'array' && Array.isArray(value)) {
    return value.map((item, index) =>
      normalizeKeys(def.element as AnySchema, item, clashes, [...path, index]),
    );
  }
  if (def.type !== 'object' || typeof value !== 'object' || value === null || Array.isArray(value))
    return value;
  const { fields, byLowerCase } = fieldsOf(inner, def.shape as Record<string, AnySchema>);
  const entries = new Map<string, unknown>();
  const spellings = new Map<string, string[]>();
  for (const [key, item] of Object.entries(value)) {
    const canonical = fields.has(key) ? key : (byLowerCase.get(key.toLowerCase()) ?? key);
    const seen = spellings.get(canonical);
    if (seen) {
      seen.push(key);
      continue;
    }
    spellings.set(canonical, [key]);
    const fieldSchema = fields.get(canonical);
    entries.set(
      canonical,
      fieldSchema ? normalizeKeys(fieldSchema, item, clashes, [...path, canonical]) : item,
    );
  }
  for (const [canonical, keys] of spellings) {
    if (keys.length > 1) clashes.push({ path: [...path, canonical], keys });
  }
  // fromEntries defines own properties, so a `__proto__` key stays a (refused) key
  return Object.fromEntries(entries);
}

function pathOf(prefix: string, path: readonly PropertyKey[]): string {
  const parts = [prefix, ...path.map(String)].filter(Boolean);
  return parts.join('.') || '(body)';
}

/**
 * Collects messages per field. A Map underneath, since field names come from the request: in a
 * plain object `errors["constructor"]` or `errors["__proto__"]` would already "exist".
 */
function fieldErrorCollector() {
  const byField = new Map<string, string[]>();
  return {
    add(field: string, message: string) {
      const messages = byField.get(field);
      if (messages) messages.push(message);
      else byField.set(field, [message]);
    },
    /** As a plain object; `Object.fromEntries` keeps a `__proto__` field an own property. */
    result: (): FieldErrors => Object.fromEntries(byField),
  };
}

function addIssues(
  add: (field: string, message: string) => void,
  issues: z.core.$ZodIssue[],
  prefix: string,
) {
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) add(pathOf(prefix, [...issue.path, key]), 'Unknown field');
    } else if (issue.code === 'invalid_type' && 'input' in issue && issue.input === undefined) {
      // only issues parsed with `reportInput` carry `input`; without it every type error would read "Required"
      add(pathOf(prefix, issue.path), 'Required');
    } else {
      add(pathOf(prefix, issue.path), issue.message);
    }
  }
}

/** Zod issues as ProblemDetails `errors`: unknown keys are named one by one. */
export function issuesToFieldErrors(issues: z.core.$ZodIssue[], prefix = ''): FieldErrors {
  const errors = fieldErrorCollector();
  addIssues(errors.add, issues, prefix);
  return errors.result();
}

/** Deepest nesting a request value may have; no operation needs more. */
export const MAX_DEPTH = 32;
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Strings Postgres cannot store or that would be silently altered (NUL characters, lone UTF-16
 * surrogates), and nesting deeper than MAX_DEPTH, anywhere in `value`. Iterative, so a body
 * nested a million levels deep cannot overflow the stack.
 */
export function textProblems(value: unknown): { path: Path; message: string }[] {
  const problems: { path: Path; message: string }[] = [];
  const stack: [unknown, Path][] = [[value, []]];
  while (stack.length > 0 && problems.length < 20) {
    const [item, path] = stack.pop()!;
    if (typeof item === 'string') {
      if (item.includes('\u0000')) problems.push({ path, message: 'must not contain NUL characters' });
      else if (LONE_SURROGATE.test(item)) problems.push({ path, message: 'must be well-formed Unicode' });
    } else if (typeof item === 'object' && item !== null) {
      if (path.length >= MAX_DEPTH) {
        problems.push({ path, message: `is nested more than ${MAX_DEPTH} levels deep` });
        continue;
      }
      const children: [unknown, Path][] = Array.isArray(item)
        ? item.map((child, index) => [child, [...path, index]])
        : Object.entries(item).map(([key, child]) => [child, [...path, key]]);
      // one by one, as spreading half a million children into push() would overflow the stack
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
    }
  }
  return problems;
}

/**
 * Parses `value` with `schema` after key normalisation; a failure is a 400 naming every field.
 * Besides the schema's rules, no field may be given twice (in two spellings), no string may hold
 * NUL or a lone surrogate, and nothing may be nested deeper than MAX_DEPTH.
 */
export function parseInput<S extends z.ZodType>(
  schema: S,
  value: unknown,
  where: string,
  prefix = '',
): z.output<S> {
  const clashes: KeyClash[] = [];
  const normalized = normalizeKeys(schema, value, clashes);
  const problems = textProblems(normalized);
  const result = schema.safeParse(normalized, { reportInput: true });
  if (result.success && clashes.length === 0 && problems.length === 0) return result.data;
  const errors = fieldErrorCollector();
  if (!result.success) addIssues(errors.add, result.error.issues, prefix);
  for (const { path, keys } of clashes) {
    const spellings = keys.map((key) => `"${key}"`).join(', ');
    errors.add(
      pathOf(prefix, path),
      `Given more than once (as ${spellings}); names match case-insensitively`,
    );
  }
  for (const { path, message } of problems) errors.add(pathOf(prefix, path), message);
  const fieldErrors = errors.result();
  const fields = Object.keys(fieldErrors);
  throw new AppError('ValidationFailed', `Invalid ${where}: ${fields.slice(0, 10).join(', ')}`, fieldErrors);
}

/** A query-string boolean: `true`/`false` in any case, also `1`/`0`. */
export const queryBoolean = z
  .string()
  .trim()
  .toLowerCase()
  .pipe(z.enum(['true', 'false', '1', '0']))
  .transform((v) => v === 'true' || v === '1');

/**
 * A whole number written as decimal digits, as query and path values are text. Stricter than
 * `z.coerce.number()`, which would also take `0x10`, `1e1`, ` 7` or an empty string. Rendered in
 * OpenAPI as the integer it stands for.
 */
export function wholeNumberText(name: string, min: number, max: number, fallback?: number) {
  const label = name ? `${name} ` : '';
  const notWhole = `${label}must be a whole number`;
  const text = z
    .string({
      error: (issue) =>
        Array.isArray(issue.input) ? `${label}must be given once, not ${issue.input.length} times` : notWhole,
    })
    .regex(/^[0-9]+$/, notWhole)
    .transform(Number)
    .pipe(
      z
        .number()
        .min(min, `${label}must be at least ${min}`)
        .max(max, max === 2147483647 ? `${label}must fit in 32 bits` : `${label}must be at most ${max}`),
    );
  // in OpenAPI, the integer it stands for, not the text rules (a string with a pattern)
  const rendered = {
    ...(fallback === undefined ? {} : { default: fallback }),
    type: 'integer',
    minimum: min,
    maximum: max,
  };
  const override = ({ jsonSchema }: { jsonSchema: Record<string, unknown> }) => {
    for (const key of Object.keys(jsonSchema)) delete jsonSchema[key];
    Object.assign(jsonSchema, rendered);
  };
  return fallback === undefined ? text.meta({ override }) : text.default(fallback).meta({ override });
}

/** A positive int32 id in a path. */
export const pathId = wholeNumberText('', 1, 2147483647);
