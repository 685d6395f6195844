import { DocumentRead, DocumentWrite, FileName, FileRead, FileWrite } from '@platform/shared';
import type { Knex } from '@platform/db';
import { z } from 'zod';
import { AppError, fieldError } from '../../http/errors';
import { defineRoute } from '../../http/route';
import { pathId, wholeNumberText } from '../../http/validate';
import { downloadFile, uploadFile, type FileUploadFields } from '../file-service';
import { withMeta, isoDate } from '../present';
import {
  DEFAULT_READERS,
  DEFAULT_WRITERS,
  defineResource,
  type ResourceDefinition,
  writeColumns,
  tableFields,
} from '../resource';

/**
 * A document's file is its own: not the file of another live document (a unique index closes the
 * race), nor one attached (`documentId`) to another live document.
 */
async function assertFileFree(trx: Knex.Transaction, fileId: number, documentId: number | undefined) {
  const others = (query: Knex.QueryBuilder) => {
    if (documentId !== undefined) query.whereNot('documents.id', documentId);
  };
  const holder = await trx('documents')
    .where({ file_id: fileId })
    .whereNull('deleted')
    .modify(others)
    .first('id');
  if (holder)
    throw fieldError('fileId', `File ${fileId} is already the file of document ${String(holder.id)}`);
  const attached = await trx('files')
    .join('documents', 'documents.id', 'files.document_id')
    .where('files.id', fileId)
    .whereNull('documents.deleted')
    .modify(others)
    .first('documents.id');
  if (attached) throw fieldError('fileId', `File ${fileId} is attached to document ${String(attached.id)}`);
}

/** Document: the record of a contract, an invoice, minutes …, optionally about a property, unit or process. */
export const documentResource = defineResource({
  name: 'Document',
  path: '/api/documents',
  table: 'documents',
  permission: 'Document',
  read: DocumentRead,
  write: DocumentWrite,
  columns: writeColumns(DocumentWrite),
  relations: {
    propertyId: { table: 'properties', name: 'Property' },
    unitId: { table: 'units', name: 'Unit' },
    processId: { table: 'processes', name: 'Process' },
    fileId: { table: 'files', name: 'File' },
  },
  collection: {
    fields: tableFields('documents', {
      id: 'integer',
      partyId: 'integer',
      title: 'string',
      category: 'string',
      documentDate: 'date',
      propertyId: 'integer',
      unitId: 'integer',
      processId: 'integer',
      fileId: 'integer',
      created: 'timestamp',
      lastModified: 'timestamp',
    }),
    sortable: ['id', 'title', 'category', 'documentDate', 'propertyId', 'created', 'lastModified'],
    tieBreaker: 'documents.id',
  },
  present: (row) =>
    withMeta(row, {
      partyId: row.party_id as number,
      title: row.title as string,
      category: row.category as DocumentRead['category'],
      description: row.description as string | null,
      documentDate: isoDate(row.document_date),
      propertyId: row.property_id as number | null,
      unitId: row.unit_id as number | null,
      processId: row.process_id as number | null,
      fileId: row.file_id as number | null,
    }),
  // checked on the merged row, so a patch of the property alone is held to the stored unit and process
  async validate(values, { trx }) {
    const propertyId = values.property_id as number | null | undefined;
    if (propertyId != null && values.unit_id != null) {
      const unit = await trx('units').where({ id: values.unit_id }).first('property_id');
      if (unit && unit.property_id !== propertyId) {
        throw fieldError(
          'unitId',
          `Unit ${String(values.unit_id)} belongs to property ${String(unit.property_id)}, not to property ${propertyId}`,
        );
      }
    }
    if (propertyId != null && values.process_id != null) {
      const process = await trx('processes').where({ id: values.process_id }).first('property_id');
      if (process?.property_id != null && process.property_id !== propertyId) {
        throw fieldError(
          'processId',
          `Process ${String(values.process_id)} is about property ${String(process.property_id)}, not property ${propertyId}`,
        );
      }
    }
    if (values.file_id != null)
      await assertFileFree(trx, values.file_id as number, values.id as number | undefined);
  },
});

/** A positive int32 id in a text field of a multipart body. */
const formId = wholeNumberText('', 1, 2147483647);

/** The text fields of `POST /api/files` beside the file part. */
const FileUploadFieldsSchema = z.strictObject({
  partyId: formId.optional().meta({ description: 'Owning party; the caller’s own party when absent.' }),
  documentId: formId.optional().meta({ description: 'The document the file is attached to.' }),
  propertyId: formId.optional(),
  fileName: FileName.optional().meta({
    description: 'The name to keep; the file part’s filename (its last path segment, made safe) when absent.',
  }),
});

/** The columns of a file except its bytes, which only the download reads. */
const FILE_METADATA_COLUMNS = [
  'id',
  'party_id',
  'file_name',
  'content_type',
  'size_bytes',
  'sha256',
  'document_id',
  'property_id',
  'created',
  'last_modified',
  'deleted',
] as const;

/**
 * File: bytes uploaded as multipart/form-data and kept in Postgres, downloaded from
 * `/api/files/{id}/content`. A PATCH changes its metadata only; the bytes and their media type
 * never change (a new version is a new upload).
 */
export const fileResource = defineResource({
  name: 'File',
  path: '/api/files',
  table: 'files',
  permission: 'File',
  read: FileRead,
  write: FileWrite,
  columns: writeColumns(FileWrite),
  relations: {
    documentId: { table: 'documents', name: 'Document' },
    propertyId: { table: 'properties', name: 'Property' },
  },
  selectColumns: FILE_METADATA_COLUMNS,
  collection: {
    fields: tableFields('files', {
      id: 'integer',
      partyId: 'integer',
      fileName: 'string',
      contentType: 'string',
      sizeBytes: 'integer',
      sha256: 'string',
      documentId: 'integer',
      propertyId: 'integer',
      created: 'timestamp',
      lastModified: 'timestamp',
    }),
    sortable: ['id', 'fileName', 'contentType', 'sizeBytes', 'documentId', 'created', 'lastModified'],
    tieBreaker: 'files.id',
  },
  present: (row) =>
    withMeta(row, {
      partyId: row.party_id as number,
      fileName: row.file_name as string,
      contentType: row.content_type as string,
      sizeBytes: row.size_bytes as number,
      sha256: row.sha256 as string,
      documentId: row.document_id as number | null,
      propertyId: row.property_id as number | null,
    }),
  async validate(values, { trx }) {
    if (values.id === undefined || values.document_id == null) return;
    // the file of a live document stays attached to that document (or to none)
    const holder = await trx('documents')
      .where({ file_id: values.id })
      .whereNot({ id: values.document_id })
      .whereNull('deleted')
      .first('id');
    if (holder) {
      throw fieldError(
        'documentId',
        `File ${String(values.id)} is the file of document ${String(holder.id)}, so it cannot be attached to another`,
      );
    }
  },
  async beforeDelete(current, { trx }) {
    const holder = await trx('documents').where({ file_id: current.id }).whereNull('deleted').first('id');
    if (holder) {
      throw new AppError(
        'Conflict',
        `File ${current.id} is the file of document ${String(holder.id)}; change or delete the document first`,
      );
    }
  },
  routes: (def) => [
    defineRoute({
      method: 'post',
      path: def.path,
      summary: 'Upload a File',
      description:
        'A multipart/form-data body with one file part `file` (at most FILE_UPLOAD_LIMIT bytes, 10 MiB by ' +
        'default: a larger one is a 413) and the optional text fields. The part’s filename (made safe) and ' +
        'Content-Type are kept. Emits the File Created webhook.',
      tags: [def.name],
      auth: { allow: def.writers ?? DEFAULT_WRITERS, permission: 'File.Create' },
      body: FileUploadFieldsSchema,
      multipart: { files: ['file'], maxFileBytes: (config) => config.FILE_UPLOAD_LIMIT },
      response: { description: 'The new File', schema: def.read },
      errors: [404, 413, 415],
      handler: ({ deps, principal, body, files }) =>
        uploadFile(deps, principal, def, body as FileUploadFields, files.file!),
    }),
    defineRoute({
      method: 'get',
      path: `${def.path}/:id/content`,
      summary: 'Download the bytes of a File',
      description:
        'The bytes with the Content-Type they were uploaded with, as an attachment. The ETag is the SHA-256; ' +
        'a request whose If-None-Match holds it answers 304 without the bytes.',
      tags: [def.name],
      auth: { allow: def.readers ?? DEFAULT_READERS, permission: 'File.Read' },
      params: z.strictObject({ id: pathId }),
      response: {
        description: 'The bytes of the file, with the Content-Type they were uploaded with',
        binary: {
          headers: {
            'Content-Disposition': "attachment; filename=\"…\"; filename*=UTF-8''… (the file's name)",
            ETag: 'The SHA-256 of the bytes, quoted.',
          },
        },
      },
      errors: [404],
      handler: ({ deps, principal, params }) => downloadFile(deps, principal, def, params.id),
    }),
  ],
});

export const documentResources: ResourceDefinition[] = [documentResource, fileResource];
