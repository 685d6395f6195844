import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { normalizeMediaType, sanitizeFileName } from '@platform/shared';
import type { Principal } from '../auth/principal';
import type { AppDeps } from '../deps';
import { fieldError } from '../http/errors';
import { BinaryBody, type UploadedFile } from '../http/route';
import type { ResourceDefinition } from './resource';
import { createResource, readColumns } from './resource-service';

/** The text fields of an upload, validated. */
export interface FileUploadFields {
  partyId?: number;
  documentId?: number;
  propertyId?: number;
  fileName?: string;
}

/**
 * Stores an uploaded file part as a new File through the registry's create (scope, relations,
 * change capture): its name (the `fileName` field, else the part's filename made safe), its
 * media type as uploaded, and its bytes with their size and SHA-256.
 */
export async function uploadFile(
  deps: AppDeps,
  principal: Principal,
  def: ResourceDefinition,
  fields: FileUploadFields,
  file: UploadedFile,
): Promise<unknown> {
  const fileName = fields.fileName ?? sanitizeFileName(file.fileName);
  if (!fileName) {
    throw fieldError('file', 'The file part needs a filename (or send the field fileName)');
  }
  const contentType = normalizeMediaType(file.contentType);
  if (!contentType) {
    throw fieldError(
      'file',
      'The Content-Type of the file part must be a media type such as application/pdf',
    );
  }
  const content = await readFile(file.path);
  return createResource(
    deps,
    principal,
    def,
    { ...fields, fileName },
    {
      content,
      content_type: contentType,
      size_bytes: content.length,
      sha256: createHash('sha256').update(content).digest('hex'),
    },
  );
}

/**
 * `Content-Disposition: attachment` with the name twice: an ASCII fallback and the exact name
 * percent-encoded as UTF-8 (RFC 6266, RFC 8187), which every current browser prefers.
 */
export function attachmentDisposition(fileName: string): string {
  const fallback = fileName.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  // encodeURIComponent leaves ' ( ) * unescaped, which RFC 8187 does not allow in a value
  const encoded = encodeURIComponent(fileName).replace(
    /['()*]/g,
    (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}

/**
 * The bytes of a File the caller can see, with the media type they were uploaded with, as an
 * attachment the browser must not sniff or render in the API's origin; ETag = SHA-256.
 */
export async function downloadFile(
  deps: AppDeps,
  principal: Principal,
  def: ResourceDefinition,
  id: number,
): Promise<BinaryBody> {
  const row = await readColumns(deps, principal, def, id, ['file_name', 'content_type', 'sha256', 'content']);
  return new BinaryBody(
    row.content as Buffer,
    row.content_type as string,
    {
      'Content-Disposition': attachmentDisposition(row.file_name as string),
      'X-Content-Type-Options': 'nosniff',
      // should a browser still display it (a PDF viewer), no script of the file runs
      'Content-Security-Policy': "default-src 'none'; sandbox",
      // the bytes are the caller's data: no shared cache; a private one revalidates by ETag
      'Cache-Control': 'private, no-cache',
    },
    row.sha256 as string,
  );
}
