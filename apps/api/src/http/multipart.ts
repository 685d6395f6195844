import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Context, Middleware } from 'koa';
import { HttpMethodEnum, koaBody, type ScalarOrArrayFiles } from 'koa-body';
import { z } from 'zod';
import type { AppDeps } from '../deps';
import { AppError, type FieldErrors } from './errors';
import type { RouteDefinition, RouteMultipart, UploadedFile } from './route';
import { parseInput } from './validate';

/** Formidable's error codes (formidable/src/FormidableError.js) that a client can cause. */
const FORMIDABLE = {
  maxFieldsSizeExceeded: 1006,
  maxFieldsExceeded: 1007,
  biggerThanTotalMaxFileSize: 1009,
  maxFilesExceeded: 1015,
  biggerThanMaxFileSize: 1016,
} as const;

/** Most text fields a multipart body may carry; no route takes more than a handful. */
const MAX_FIELDS = 100;

const partList = (multipart: RouteMultipart) => multipart.files.map((name) => `"${name}"`).join(', ');

/** Errors of reading a multipart body, as client errors; anything else (a full disk) stays a 500. */
function multipartError(
  error: Error & { code?: unknown; httpCode?: unknown },
  multipart: RouteMultipart,
  maxFileBytes: number,
): Error {
  switch (error.code) {
    case FORMIDABLE.biggerThanMaxFileSize:
    case FORMIDABLE.biggerThanTotalMaxFileSize:
      return new AppError('PayloadTooLarge', `A file part may hold at most ${maxFileBytes} bytes`);
    case FORMIDABLE.maxFieldsSizeExceeded:
      return new AppError('PayloadTooLarge', 'The text fields of the request body are too large');
    case FORMIDABLE.maxFieldsExceeded:
      return new AppError('BadRequest', `The request body has more than ${MAX_FIELDS} text fields`);
    case FORMIDABLE.maxFilesExceeded:
      return new AppError('BadRequest', `Send the file part ${partList(multipart)} once, and no other file`);
  }
  // formidable's own errors (codes 1000–1099) describe a malformed body: a missing boundary,
  // an unknown transfer encoding, a body that ends in the middle of a part
  if (typeof error.code === 'number' && error.code >= 1000 && error.code < 1100) {
    if (error.httpCode === 415) {
      return new AppError('UnsupportedMediaType', 'The request body must be multipart/form-data');
    }
    return new AppError('BadRequest', `The multipart body cannot be read: ${error.message.slice(0, 200)}`);
  }
  return error;
}

/**
 * Reads a multipart/form-data body into text fields (`ctx.request.body`) and file parts on disk
 * (`ctx.request.files`), in a directory of its own that is removed, with every part in it, once
 * the request has been answered or has failed. A file part over the route's limit is a 413 as
 * soon as its bytes pass the limit; the rest of the body is read and dropped.
 */
export function multipartBody(
  route: RouteDefinition & { multipart: RouteMultipart },
  deps: AppDeps,
): Middleware {
  const multipart = route.multipart;
  const method = HttpMethodEnum[route.method.toUpperCase() as Uppercase<RouteDefinition['method']>];
  return async (ctx, next) => {
    if (!ctx.request.length && !ctx.get('transfer-encoding')) {
      throw new AppError(
        'ValidationFailed',
        `The request needs a multipart/form-data body with the file part ${partList(multipart)}`,
        Object.fromEntries(multipart.files.map((name) => [name, ['Required']])),
      );
    }
    if (!ctx.is('multipart/form-data')) {
      throw new AppError('UnsupportedMediaType', 'The request body must be multipart/form-data');
    }
    const encoding = ctx.get('content-encoding').trim().toLowerCase();
    if (encoding !== '' && encoding !== 'identity') {
      throw new AppError(
        'UnsupportedMediaType',
        `A multipart body cannot be sent with Content-Encoding ${encoding}`,
      );
    }
    const maxFileBytes = multipart.maxFileBytes(deps.config);
    // per request, so that whatever formidable leaves behind (a part cut off by an error
    // included) goes with the directory
    const uploadDir = await mkdtemp(join(tmpdir(), 'api-upload-'));
    try {
      const parse = koaBody({
        json: false,
        urlencoded: false,
        text: false,
        multipart: true,
        multipartTypes: ['multipart/form-data'],
        parsedMethods: [method],
        formidable: {
          uploadDir,
          maxFileSize: maxFileBytes,
          // one part more than the route takes, so a part sent twice is seen (and refused with
          // a 400 naming it) while a flood of parts stops early
          maxFiles: multipart.files.length + 1,
          maxTotalFileSize: maxFileBytes * (multipart.files.length + 1),
          allowEmptyFiles: true,
          minFileSize: 0,
          maxFields: MAX_FIELDS,
          maxFieldsSize: deps.config.BODY_LIMIT,
        },
        onError: (error) => {
          throw multipartError(error, multipart, maxFileBytes);
        },
      });
      await parse(ctx, async () => {});
    } catch (error) {
      // formidable stops reading at the first error; drain the rest so the client, still
      // sending, receives the answer instead of a reset connection
      ctx.req.resume();
      await rm(uploadDir, { recursive: true, force: true });
      throw error;
    }
    try {
      await next();
    } finally {
      await rm(uploadDir, { recursive: true, force: true });
    }
  };
}

/** Formidable's file, as far as it is read here. */
interface PartFile {
  filepath: string;
  originalFilename: string | null;
  mimetype: string | null;
  size: number;
}

/**
 * The validated input of a multipart route: each file part exactly once (names match
 * case-insensitively, like field names) and the text fields through `body`, as a JSON body
 * would go. Every problem, of parts and fields, is named in one 400.
 */
export function multipartInput(
  multipart: RouteMultipart,
  body: z.ZodType | undefined,
  ctx: Context,
): { body: unknown; files: Record<string, UploadedFile> } {
  const errors = new Map<string, string[]>();
  const add = (field: string, message: string) => errors.set(field, [...(errors.get(field) ?? []), message]);
  const byLowerCase = new Map(multipart.files.map((name) => [name.toLowerCase(), name]));
  const parts = new Map<string, PartFile[]>();
  for (const [name, value] of Object.entries((ctx.request.files ?? {}) as ScalarOrArrayFiles)) {
    const canonical = byLowerCase.get(name.toLowerCase());
    const list = (Array.isArray(value) ? value : [value]) as unknown as PartFile[];
    if (canonical) parts.set(canonical, [...(parts.get(canonical) ?? []), ...list]);
    else add(name, `Unknown file part; send only ${partList(multipart)}`);
  }
  const fields = { ...((ctx.request.body ?? {}) as Record<string, unknown>) };
  const files: Record<string, UploadedFile> = {};
  for (const name of multipart.files) {
    const list = parts.get(name) ?? [];
    // a part without a Content-Type is a text field to formidable
    const asText = Object.keys(fields).find((key) => key.toLowerCase() === name.toLowerCase());
    if (asText !== undefined) delete fields[asText];
    if (list.length === 0) {
      add(
        name,
        asText === undefined ? 'Required' : 'Must be a file part (with a filename and a Content-Type)',
      );
    } else if (list.length > 1) {
      add(name, `Given ${list.length} times; send one file part`);
    } else {
      const part = list[0]!;
      files[name] = {
        path: part.filepath,
        fileName: part.originalFilename ?? null,
        contentType: part.mimetype ?? '',
        size: part.size,
      };
    }
  }
  let parsed: unknown;
  try {
    parsed = parseInput(body ?? z.strictObject({}), fields, 'body');
  } catch (error) {
    if (!(error instanceof AppError) || !error.errors) throw error;
    for (const [field, messages] of Object.entries(error.errors)) {
      for (const message of messages) add(field, message);
    }
  }
  if (errors.size > 0) {
    const fieldErrors: FieldErrors = Object.fromEntries(errors);
    throw new AppError(
      'ValidationFailed',
      `Invalid body: ${Object.keys(fieldErrors).slice(0, 10).join(', ')}`,
      fieldErrors,
    );
  }
  return { body: parsed, files };
}
