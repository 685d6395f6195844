import { z } from 'zod';
import { EntityMeta, Id, OptionalText, Text } from './common';

/** A calendar date, `YYYY-MM-DD` (a real one: `2026-02-30` is refused). */
const CalendarDate = z.iso.date();

// ---------------------------------------------------------------------------------------------
// Document: the record of a paper a property manager files (a contract, an invoice, minutes)

export const DOCUMENT_CATEGORIES = [
  'contract',
  'invoice',
  'protocol',
  'plan',
  'certificate',
  'correspondence',
  'other',
] as const;
export type DocumentCategory = (typeof DOCUMENT_CATEGORIES)[number];

export const DocumentRead = z
  .object({
    ...EntityMeta,
    partyId: z.number().int(),
    title: z.string(),
    category: z.enum(DOCUMENT_CATEGORIES),
    description: z.string().nullable(),
    documentDate: CalendarDate.nullable().meta({ description: 'The date the document bears, YYYY-MM-DD.' }),
    propertyId: z.number().int().nullable(),
    unitId: z.number().int().nullable(),
    processId: z.number().int().nullable(),
    fileId: z.number().int().nullable().meta({ description: 'The file holding the document’s content.' }),
  })
  .meta({ id: 'DocumentRead' });
export type DocumentRead = z.infer<typeof DocumentRead>;

export const DocumentWrite = z
  .strictObject({
    partyId: Id.optional().meta({ description: 'Owning party; the caller’s own party when absent.' }),
    title: Text(200),
    category: z.enum(DOCUMENT_CATEGORIES).optional().meta({ description: '`other` when absent.' }),
    description: OptionalText(4000),
    documentDate: CalendarDate.nullable().optional(),
    propertyId: Id.nullable().optional(),
    unitId: Id.nullable().optional().meta({ description: 'Must belong to `propertyId` when both are set.' }),
    processId: Id.nullable().optional(),
    fileId: Id.nullable()
      .optional()
      .meta({ description: 'A file that is not attached to another document (its `documentId`).' }),
  })
  .meta({ id: 'DocumentWrite' });
export type DocumentWrite = z.infer<typeof DocumentWrite>;

// ---------------------------------------------------------------------------------------------
// File: bytes uploaded through the API and kept in the database

export const FILE_NAME_MAX_LENGTH = 255;

// path separators, control characters (C0, DEL, C1) and invisible format characters such as the
// right-to-left override, which can make `cod.exe` display as `exe.doc`
const UNSAFE_FILE_NAME_CHARACTER = /[/\\\p{Cc}\p{Cf}]/u;
const UNSAFE_FILE_NAME_CHARACTERS = new RegExp(UNSAFE_FILE_NAME_CHARACTER.source, 'gu');

/**
 * A name the client chose (a rename, the upload's `fileName` field): refused rather than altered
 * when it holds a path separator or a control character, since the caller can fix it.
 */
export const FileName = z
  .string()
  .trim()
  .min(1)
  .max(FILE_NAME_MAX_LENGTH)
  .refine(
    (name) => !UNSAFE_FILE_NAME_CHARACTER.test(name),
    'must not contain path separators (/ \\) or control characters',
  )
  .refine((name) => name !== '.' && name !== '..', 'must be a file name, not . or ..')
  .meta({ description: 'At most 255 characters, without path separators or control characters.' });

/**
 * The name a file part arrived with, made safe: only the last path segment (some clients send a
 * whole path), without control or format characters, at most 255 characters with the extension
 * kept. Null when nothing usable is left.
 */
export function sanitizeFileName(raw: string | null | undefined): string | null {
  if (!raw) return null;
  const base = raw.split(/[/\\]/).pop() ?? '';
  const name = base.replace(UNSAFE_FILE_NAME_CHARACTERS, '').trim();
  if (name === '' || name === '.' || name === '..') return null;
  const characters = [...name];
  if (characters.length <= FILE_NAME_MAX_LENGTH) return name;
  // shorten the stem, not the extension, so the download still opens with the right program
  const dot = name.lastIndexOf('.');
  const extension = dot > 0 ? [...name.slice(dot)] : [];
  if (extension.length > 0 && extension.length <= 16) {
    const stem = characters.slice(0, characters.length - extension.length);
    return [...stem.slice(0, FILE_NAME_MAX_LENGTH - extension.length), ...extension].join('').trim();
  }
  return characters.slice(0, FILE_NAME_MAX_LENGTH).join('').trim();
}

// RFC 6838 restricted names for type and subtype, RFC 9110 parameters (token or quoted string)
const TOKEN = "[A-Za-z0-9!#$%&'*+.^_`|~-]+";
const RESTRICTED_NAME = '[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}';
const MEDIA_TYPE = new RegExp(
  `^(${RESTRICTED_NAME})/(${RESTRICTED_NAME})((?:[ \\t]*;[ \\t]*${TOKEN}=(?:${TOKEN}|"(?:[^"\\\\\\p{Cc}]|\\\\[^\\p{Cc}])*"))*)$`,
  'u',
);

/**
 * A media type as a Content-Type header carries it (`application/pdf`, `text/plain; charset=utf-8`),
 * type and subtype lower-cased; null when `value` is not one.
 */
export function normalizeMediaType(value: string | null | undefined): string | null {
  const text = (value ?? '').trim();
  if (text.length > 255) return null;
  const match = MEDIA_TYPE.exec(text);
  if (!match) return null;
  return `${match[1]!.toLowerCase()}/${match[2]!.toLowerCase()}${match[3] ?? ''}`;
}

export const FileRead = z
  .object({
    ...EntityMeta,
    partyId: z.number().int(),
    fileName: z.string(),
    contentType: z.string().meta({ description: 'The media type the file was uploaded with.' }),
    sizeBytes: z.number().int(),
    sha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .meta({
        description: 'SHA-256 of the bytes, lower-case hex; also the download’s ETag.',
        examples: ['e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
      }),
    documentId: z.number().int().nullable(),
    propertyId: z.number().int().nullable(),
  })
  .meta({ id: 'FileRead' });
export type FileRead = z.infer<typeof FileRead>;

/** The metadata of a file; its bytes and media type come from the upload and never change. */
export const FileWrite = z
  .strictObject({
    partyId: Id.optional().meta({ description: 'Owning party; the caller’s own party when absent.' }),
    fileName: FileName,
    documentId: Id.nullable().optional().meta({ description: 'The document the file is attached to.' }),
    propertyId: Id.nullable().optional(),
  })
  .meta({ id: 'FileWrite' });
export type FileWrite = z.infer<typeof FileWrite>;
