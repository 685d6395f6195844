import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  sanitizeFileName,
  normalizeMediaType,
  WebhookState,
  type DocumentRead,
  type FileRead,
} from '@platform/shared';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectProblem, postRaw, rawRequest, writableCounts } from '../../tests/support/http';
import { testConfig } from '../config';
import { buildOpenApiDocument } from '../http/openapi';
import { ROUTES } from '../routes';
import { expectAccessRules, useTestApi } from '../../tests/support/api';
import { attachmentDisposition } from './file-service';
import {
  buildProperty,
  buildUnit,
  capturedChanges,
  countRows,
  expectRolledBack,
  expectOutOfScope,
  expectRegistryAccessRules,
  resetCapture,
  subscribe,
  webhookRows,
  expectDeleted,
} from '../../tests/support/resources';

/** FILE_UPLOAD_LIMIT of the test API: small, so the limit tests send a few KB. */
const LIMIT = 4096;

let uploadRoot: string;
let originalTmpdir: string | undefined;
let sequence = 0;

async function json<T>(response: Response, status = 200): Promise<T> {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  return JSON.parse(text) as T;
}

const pmcToken = () => world.pmc.full.token;

async function newProcess(propertyId: number | null, partyId = world.pmc.id): Promise<number> {
  const [row] = await api.db
    .knex('processes')
    .insert({ party_id: partyId, title: `Process ${++sequence}`, property_id: propertyId })
    .returning('id');
  return row.id;
}

function createDocument(body: Record<string, unknown>, token = pmcToken()) {
  return api
    .fetch('/api/documents', { method: 'POST', token, json: { title: 'Mietvertrag', ...body } })
    .then((response) => json<DocumentRead>(response));
}

/** A multipart form with one file part `file` and the given text fields. */
function fileForm(
  bytes: Uint8Array = randomBytes(1000),
  options: { name?: string; type?: string; fields?: Record<string, string> } = {},
): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(options.fields ?? {})) form.append(name, value);
  form.append(
    'file',
    new Blob([bytes], { type: options.type ?? 'application/pdf' }),
    options.name ?? 'vertrag.pdf',
  );
  return form;
}

function postForm(form: FormData, token = pmcToken()): Promise<Response> {
  return api.fetch('/api/files', { method: 'POST', token, body: form });
}

async function upload(
  bytes?: Uint8Array,
  options?: { name?: string; type?: string; fields?: Record<string, string> },
  token = pmcToken(),
): Promise<FileRead> {
  return json<FileRead>(await postForm(fileForm(bytes, options), token));
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** Whatever a refused request may have written: rows anywhere and upload directories on disk. */
async function snapshot() {
  return {
    writable: await writableCounts(api),
    files: await countRows(api, 'files'),
    documents: await countRows(api, 'documents'),
    changes: await countRows(api, 'entity_changes'),
    webhooks: await countRows(api, 'webhooks'),
    uploads: await readdir(uploadRoot),
  };
}

beforeAll(async () => {
  // the API puts each upload's parts in a directory under os.tmpdir(), read per request: point
  // it at a directory of this file's own, so the tests can prove nothing is left behind
  originalTmpdir = process.env.TMPDIR;
  uploadRoot = await mkdtemp(join(tmpdir(), 'documents-test-'));
  process.env.TMPDIR = uploadRoot;
});
afterAll(async () => {
  if (originalTmpdir === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = originalTmpdir;
  await rm(uploadRoot, { recursive: true, force: true });
});
// after the hooks above: started once TMPDIR points at the upload root, closed before it is restored
const { api, world } = useTestApi({ world: true, config: { FILE_UPLOAD_LIMIT: `${LIMIT}b` } });
beforeEach(() => resetCapture(api));
afterEach(async () => {
  // every request has been answered, so every upload directory must be gone (cleared anyway,
  // so one test's leftovers do not fail the next)
  const left = await readdir(uploadRoot);
  await Promise.all(left.map((name) => rm(join(uploadRoot, name), { recursive: true, force: true })));
  expect(left).toEqual([]);
});

describe('Document through the resource registry', () => {
  it('creates, reads, lists, searches, updates and deletes', async () => {
    const token = pmcToken();
    const propertyId = await buildProperty(api, world.pmc.id);
    const unitId = await buildUnit(api, world.pmc.id, propertyId);
    const processId = await newProcess(propertyId);
    const file = await upload();
    const created = await createDocument({
      category: 'contract',
      description: 'Mietvertrag WE 1',
      documentDate: '2025-03-01',
      propertyId,
      unitId,
      processId,
      fileId: file.id,
    });
    expect(created).toEqual({
      id: expect.any(Number),
      created: expect.any(String),
      lastModified: null,
      deleted: null,
      partyId: world.pmc.id,
      title: 'Mietvertrag',
      category: 'contract',
      description: 'Mietvertrag WE 1',
      documentDate: '2025-03-01',
      propertyId,
      unitId,
      processId,
      fileId: file.id,
    });
    expect(await createDocument({ title: 'Notiz' })).toMatchObject({ category: 'other', propertyId: null });

    expect(await json(await api.fetch(`/api/documents/${created.id}`, { token }))).toEqual(created);
    const list = await json<{ items: DocumentRead[] }>(
      await api.fetch('/api/documents?SortByAttributeName=documentDate&AscendingOrder=false', { token }),
    );
    expect(list.items).toContainEqual(created);
    const search = await json<{ items: DocumentRead[] }>(
      await api.fetch('/api/documents/search', {
        method: 'POST',
        token,
        json: {
          filters: [
            { attribute: 'category', operator: 'eq', value: 'contract' },
            { attribute: 'documentDate', operator: 'gte', value: '2025-01-01' },
          ],
        },
      }),
    );
    expect(search.items.map((d) => d.id)).toEqual([created.id]);
    const batch = await json<DocumentRead[]>(
      await api.fetch('/api/documents/batch', { method: 'POST', token, json: { ids: [created.id] } }),
    );
    expect(batch).toEqual([created]);

    const patched = await json<DocumentRead>(
      await api.fetch(`/api/documents/${created.id}`, {
        method: 'PATCH',
        token,
        json: { title: 'Mietvertrag (gekündigt)', unitId: null, documentDate: null },
      }),
    );
    expect(patched).toMatchObject({
      title: 'Mietvertrag (gekündigt)',
      unitId: null,
      documentDate: null,
      propertyId,
    });
    expect(patched.lastModified).not.toBeNull();

    await expectDeleted(api, `/api/documents/${created.id}`, token);
  });

  it('applies the access rules of every operation', async () => {
    await expectRegistryAccessRules(api, world, '/api/documents', 'Document', {
      body: { title: 'Protokoll' },
      patch: { title: 'Protokoll 2' },
    });
  });

  it('scopes reads and writes to the caller’s parties (out of scope = 404)', async () => {
    const token = pmcToken();
    const foreign = await createDocument({}, world.otherPmc.full.token);
    const managed = await createDocument({ partyId: world.user.id }, world.admin.full.token);
    expect((await api.fetch(`/api/documents/${managed.id}`, { token })).status).toBe(200);
    // a User sees its own party's document, not its managing party's
    expect((await api.fetch(`/api/documents/${managed.id}`, { token: world.user.full.token })).status).toBe(
      200,
    );
    await expectOutOfScope(api, '/api/documents', token, foreign.id, {
      patch: { title: 'X' },
      visible: [managed.id],
    });
    // relations must be live and in the caller's scope too
    const foreignProperty = await buildProperty(api, world.otherPmc.id);
    const problem = await expectProblem(
      await api.fetch('/api/documents', {
        method: 'POST',
        token,
        json: { title: 'X', propertyId: foreignProperty },
      }),
      400,
    );
    expect(problem.errors).toEqual({ propertyId: [`Property ${foreignProperty} does not exist`] });
  });

  it('refuses bad input with a 400 naming the field and writes nothing', async () => {
    const propertyId = await buildProperty(api, world.pmc.id);
    const otherProperty = await buildProperty(api, world.pmc.id);
    const unitElsewhere = await buildUnit(api, world.pmc.id, otherProperty);
    const processElsewhere = await newProcess(otherProperty);
    const file = await upload();
    const holder = await createDocument({ fileId: file.id });
    const before = await snapshot();
    for (const [body, field] of [
      [{ title: '' }, 'title'],
      [{ title: 'x'.repeat(201) }, 'title'],
      [{ title: 'X', category: 'memo' }, 'category'],
      [{ title: 'X', documentDate: '2026-02-30' }, 'documentDate'],
      [{ title: 'X', propertyId: 'one' }, 'propertyId'],
      [{ title: 'X', unknown: 1 }, 'unknown'],
      [{ category: 'plan' }, 'title'],
      [{ title: 'X', propertyId, unitId: unitElsewhere }, 'unitId'],
      [{ title: 'X', propertyId, processId: processElsewhere }, 'processId'],
      [{ title: 'X', fileId: file.id }, 'fileId'],
      [{ title: 'X', fileId: 999999 }, 'fileId'],
    ] as const) {
      const problem = await expectProblem(
        await api.fetch('/api/documents', { method: 'POST', token: pmcToken(), json: body }),
        400,
      );
      expect(Object.keys(problem.errors ?? {}), JSON.stringify(body)).toEqual([field]);
    }
    // a patch is held to the stored row: moving the property away from the document's unit
    const withUnit = await createDocument({ propertyId: otherProperty, unitId: unitElsewhere });
    const afterCreate = await snapshot();
    const problem = await expectProblem(
      await api.fetch(`/api/documents/${withUnit.id}`, {
        method: 'PATCH',
        token: pmcToken(),
        json: { propertyId },
      }),
      400,
    );
    expect(Object.keys(problem.errors ?? {})).toEqual(['unitId']);
    expect(await snapshot()).toEqual(afterCreate);
    expect(afterCreate.documents).toBe(before.documents + 1);
    // the holder keeps its file
    expect(await json(await api.fetch(`/api/documents/${holder.id}`, { token: pmcToken() }))).toEqual(holder);
  });

  it('captures every write with its read shape for the writer’s subscribed registrations only', async () => {
    const registration = await subscribe(api, world.pmc.id, 'Document');
    const updatesOnly = await subscribe(api, world.pmc.id, 'Document', [2]);
    const foreign = await subscribe(api, world.otherPmc.id, 'Document');
    await subscribe(api, world.pmc.id, 'Property');
    const token = pmcToken();
    const created = await createDocument({ category: 'invoice' });
    const updated = await json<DocumentRead>(
      await api.fetch(`/api/documents/${created.id}`, {
        method: 'PATCH',
        token,
        json: { description: 'Heizung' },
      }),
    );
    await api.fetch(`/api/documents/${created.id}`, { method: 'DELETE', token });
    // refused and foreign writes record nothing
    await api.fetch('/api/documents', { method: 'POST', token, json: { title: 'X', category: 'memo' } });
    await createDocument({}, world.otherPmc.full.token);

    const { rows: changes, summary } = await capturedChanges(api);
    expect(summary).toEqual([
      ['Document', 1, created.id, world.pmc.id, world.pmc.full.id],
      ['Document', 2, created.id, world.pmc.id, world.pmc.full.id],
      ['Document', 3, created.id, world.pmc.id, world.pmc.full.id],
      ['Document', 1, expect.any(Number), world.otherPmc.id, world.otherPmc.full.id],
    ]);
    expect(changes[0].entity).toEqual(created);
    expect(changes[1].entity).toEqual(updated);
    expect(changes[2].entity).toMatchObject({ id: created.id, deleted: expect.any(String) });

    const webhooks = await webhookRows(api);
    expect(webhooks).toEqual([
      { registration_id: registration, state: WebhookState.Created, entity_change_id: changes[0].id },
      { registration_id: registration, state: WebhookState.Created, entity_change_id: changes[1].id },
      { registration_id: updatesOnly, state: WebhookState.Created, entity_change_id: changes[1].id },
      { registration_id: registration, state: WebhookState.Created, entity_change_id: changes[2].id },
      { registration_id: foreign, state: WebhookState.Created, entity_change_id: changes[3].id },
    ]);
  });

  it('rolls back a write that fails at commit: no document change, no entity change, no webhook', async () => {
    const token = pmcToken();
    const document = await createDocument({ category: 'invoice' });
    await expectRolledBack(api, {
      partyId: world.pmc.id,
      entityName: 'Document',
      table: 'documents',
      writes: [
        () => api.fetch('/api/documents', { method: 'POST', token, json: { title: 'Rolled back' } }),
        () => api.fetch(`/api/documents/${document.id}`, { method: 'PATCH', token, json: { title: 'x' } }),
        () => api.fetch(`/api/documents/${document.id}`, { method: 'DELETE', token }),
      ],
    });
  });
});

describe('File: upload and download', () => {
  it('round-trips the bytes: upload, read, download with the stored type, name and ETag', async () => {
    const token = pmcToken();
    // every byte value, NUL included, and more than one chunk's worth
    const bytes = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), randomBytes(3000)]);
    const created = await upload(bytes, { name: 'Mietvertrag Müller (2025).pdf', type: 'application/pdf' });
    expect(created).toEqual({
      id: expect.any(Number),
      created: expect.any(String),
      lastModified: null,
      deleted: null,
      partyId: world.pmc.id,
      fileName: 'Mietvertrag Müller (2025).pdf',
      contentType: 'application/pdf',
      sizeBytes: bytes.length,
      sha256: sha256(bytes),
      documentId: null,
      propertyId: null,
    });
    const stored = await api.db.knex('files').where({ id: created.id }).first('content');
    expect(Buffer.compare(stored.content, bytes)).toBe(0);

    expect(await json(await api.fetch(`/api/files/${created.id}`, { token }))).toEqual(created);

    const download = await api.fetch(`/api/files/${created.id}/content`, { token });
    expect(download.status).toBe(200);
    const downloaded = Buffer.from(await download.arrayBuffer());
    expect(Buffer.compare(downloaded, bytes)).toBe(0);
    expect(sha256(downloaded)).toBe(created.sha256);
    expect(download.headers.get('content-type')).toBe('application/pdf');
    expect(download.headers.get('content-length')).toBe(String(bytes.length));
    expect(download.headers.get('content-disposition')).toBe(
      `attachment; filename="Mietvertrag M_ller (2025).pdf"; filename*=UTF-8''Mietvertrag%20M%C3%BCller%20%282025%29.pdf`,
    );
    expect(download.headers.get('x-content-type-options')).toBe('nosniff');
    expect(download.headers.get('etag')).toBe(`"${created.sha256}"`);

    // the ETag revalidates: no bytes again
    const again = await api.fetch(`/api/files/${created.id}/content`, {
      token,
      headers: { 'if-none-match': `"${created.sha256}"` },
    });
    expect(again.status).toBe(304);
    expect((await again.arrayBuffer()).byteLength).toBe(0);
    const weak = await api.fetch(`/api/files/${created.id}/content`, {
      token,
      headers: { 'if-none-match': `"other", W/"${created.sha256}"` },
    });
    expect(weak.status).toBe(304);
    await weak.arrayBuffer();
    const changed = await api.fetch(`/api/files/${created.id}/content`, {
      token,
      headers: { 'if-none-match': `"${'0'.repeat(64)}"` },
    });
    expect(changed.status).toBe(200);
    expect(Buffer.compare(Buffer.from(await changed.arrayBuffer()), bytes)).toBe(0);
  });

  it('keeps the media type with its parameters and answers it whatever Accept asks', async () => {
    const text = Buffer.from('Grüße aus der Hausverwaltung\n', 'utf8');
    const created = await upload(text, { name: 'gruss.txt', type: 'Text/Plain;charset=utf-8' });
    expect(created.contentType).toBe('text/plain;charset=utf-8');
    const download = await api.fetch(`/api/files/${created.id}/content`, {
      token: pmcToken(),
      headers: { accept: 'application/json' },
    });
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('text/plain;charset=utf-8');
    expect(await download.text()).toBe(text.toString('utf8'));
  });

  it('takes the optional fields and makes the part’s file name safe', async () => {
    const propertyId = await buildProperty(api, world.pmc.id);
    const document = await createDocument({ title: 'Protokoll' });
    const withFields = await upload(randomBytes(10), {
      name: 'scan.pdf',
      fields: {
        documentId: String(document.id),
        PropertyId: String(propertyId),
        fileName: 'Protokoll 2025.pdf',
      },
    });
    expect(withFields).toMatchObject({ documentId: document.id, propertyId, fileName: 'Protokoll 2025.pdf' });
    // only the last path segment, without control or bidi-override characters
    expect((await upload(randomBytes(10), { name: '../../etc/passwd' })).fileName).toBe('passwd');
    expect((await upload(randomBytes(10), { name: 'a\u0007b\u202Efdp.exe' })).fileName).toBe('abfdp.exe');
    // an empty file is a file too
    const empty = await upload(new Uint8Array(0), { name: 'leer.txt', type: 'text/plain' });
    expect(empty).toMatchObject({ sizeBytes: 0, sha256: sha256(new Uint8Array(0)) });
    const download = await api.fetch(`/api/files/${empty.id}/content`, { token: pmcToken() });
    expect(download.status).toBe(200);
    expect((await download.arrayBuffer()).byteLength).toBe(0);
  });

  it('lists, searches and batch-reads files without their bytes, and patches metadata only', async () => {
    const token = pmcToken();
    const document = await createDocument({ title: 'Rechnung' });
    const created = await upload(randomBytes(500), { name: 'rechnung-4711.pdf' });
    const list = await json<{ items: Record<string, unknown>[] }>(
      await api.fetch('/api/files?SortByAttributeName=sizeBytes&AscendingOrder=false', { token }),
    );
    expect(list.items).toContainEqual(created);
    expect(list.items.every((item) => !('content' in item))).toBe(true);
    const search = await json<{ items: FileRead[] }>(
      await api.fetch('/api/files/search', {
        method: 'POST',
        token,
        json: { filters: [{ attribute: 'fileName', operator: 'contains', value: '4711' }] },
      }),
    );
    expect(search.items).toEqual([created]);
    const batch = await json<FileRead[]>(
      await api.fetch('/api/files/batch', { method: 'POST', token, json: { ids: [created.id, 999999] } }),
    );
    expect(batch).toEqual([created]);

    const patched = await json<FileRead>(
      await api.fetch(`/api/files/${created.id}`, {
        method: 'PATCH',
        token,
        json: { fileName: 'Rechnung 4711.pdf', documentId: document.id },
      }),
    );
    expect(patched).toMatchObject({
      fileName: 'Rechnung 4711.pdf',
      documentId: document.id,
      sha256: created.sha256,
      sizeBytes: 500,
      contentType: 'application/pdf',
    });
    const download = await api.fetch(`/api/files/${created.id}/content`, { token });
    expect(download.headers.get('content-disposition')).toContain("filename*=UTF-8''Rechnung%204711.pdf");
    await download.arrayBuffer();

    // the bytes, their type and hash cannot be patched
    const before = await snapshot();
    for (const [body, field] of [
      [{ contentType: 'text/html' }, 'contentType'],
      [{ sha256: '0'.repeat(64) }, 'sha256'],
      [{ content: 'AAAA' }, 'content'],
      [{ partyId: world.user.id }, 'partyId'],
      [{ fileName: 'a/b.pdf' }, 'fileName'],
      [{ fileName: 'a\u0000b.pdf' }, 'fileName'],
      [{ fileName: 'x'.repeat(256) }, 'fileName'],
      [{ fileName: '..' }, 'fileName'],
      [{ documentId: 999999 }, 'documentId'],
    ] as const) {
      const problem = await expectProblem(
        await api.fetch(`/api/files/${created.id}`, { method: 'PATCH', token, json: body }),
        400,
      );
      expect(Object.keys(problem.errors ?? {}), JSON.stringify(body)).toEqual([field]);
    }
    expect(await snapshot()).toEqual(before);

    await expectDeleted(api, `/api/files/${created.id}`, token);
    await expectProblem(await api.fetch(`/api/files/${created.id}/content`, { token }), 404);
  });

  it('keeps a document’s file attached to it: no delete, no move to another document', async () => {
    const token = pmcToken();
    const file = await upload();
    const holder = await createDocument({ fileId: file.id });
    const other = await createDocument({ title: 'Anderes' });
    const before = await snapshot();
    await expectProblem(await api.fetch(`/api/files/${file.id}`, { method: 'DELETE', token }), 409);
    const problem = await expectProblem(
      await api.fetch(`/api/files/${file.id}`, { method: 'PATCH', token, json: { documentId: other.id } }),
      400,
    );
    expect(Object.keys(problem.errors ?? {})).toEqual(['documentId']);
    expect(await snapshot()).toEqual(before);
    // attaching it to its own document is fine
    expect(
      await json<FileRead>(
        await api.fetch(`/api/files/${file.id}`, { method: 'PATCH', token, json: { documentId: holder.id } }),
      ),
    ).toMatchObject({ documentId: holder.id });
  });

  it('applies the access rules of every operation', async () => {
    /** A file of the caller's own party (uploaded by Admin, which may upload for any party). */
    const ofCaller = async (caller: { id: number }) =>
      (await upload(randomBytes(10), { fields: { partyId: String(caller.id) } }, world.admin.full.token)).id;
    const ownedByPmc = async () =>
      (await upload(randomBytes(10), { fields: { partyId: String(world.pmc.id) } }, world.admin.full.token))
        .id;
    await expectAccessRules(api, world, {
      method: 'GET',
      path: '/api/files',
      allow: [1, 2, 3, 5, 7, 13, 14],
      permission: 'File.Read',
    });
    await expectAccessRules(api, world, {
      method: 'GET',
      path: async (caller) => `/api/files/${await ofCaller(caller)}/content`,
      allow: [1, 2, 3, 5, 7, 13, 14],
      permission: 'File.Read',
    });
    // the guards come before the body is read: an allowed caller gets past them (to a 415 for
    // this JSON body), any other gets a 403
    await expectAccessRules(api, world, {
      method: 'POST',
      path: '/api/files',
      body: { fileName: 'x.pdf' },
      allow: [1, 2],
      permission: 'File.Create',
    });
    await expectAccessRules(api, world, {
      method: 'PATCH',
      path: async () => `/api/files/${await ownedByPmc()}`,
      body: { fileName: 'y.pdf' },
      allow: [1, 2],
      permission: 'File.Update',
    });
    await expectAccessRules(api, world, {
      method: 'DELETE',
      path: async () => `/api/files/${await ownedByPmc()}`,
      allow: [1, 2],
      permission: 'File.Delete',
    });
    // a refused uploader never gets its bytes read
    const before = await snapshot();
    await expectProblem(await postForm(fileForm(), world.contractor.full.token), 403);
    await expectProblem(await postForm(fileForm(), world.pmc.bare.token), 403);
    expect(await snapshot()).toEqual(before);
  });

  it('scopes reads, downloads and writes to the caller’s parties (out of scope = 404)', async () => {
    const token = pmcToken();
    const foreign = await upload(randomBytes(20), {}, world.otherPmc.full.token);
    const managed = await upload(
      randomBytes(20),
      { fields: { partyId: String(world.user.id) } },
      world.admin.full.token,
    );
    expect(managed.partyId).toBe(world.user.id);
    await expectOutOfScope(api, '/api/files', token, foreign.id, {
      patch: { fileName: 'x.pdf' },
      visible: [managed.id],
    });
    await expectProblem(await api.fetch(`/api/files/${foreign.id}/content`, { token }), 404);
    const content = await api.fetch(`/api/files/${managed.id}/content`, { token });
    expect(content.status).toBe(200);
    await content.arrayBuffer();
    const userContent = await api.fetch(`/api/files/${managed.id}/content`, { token: world.user.full.token });
    expect(userContent.status).toBe(200);
    await userContent.arrayBuffer();
    await expectProblem(
      await api.fetch(`/api/files/${managed.id}/content`, { token: world.otherUser.full.token }),
      404,
    );

    // an upload may only name a party, document or property in the caller's scope
    const foreignDocument = await createDocument({}, world.otherPmc.full.token);
    const before = await snapshot();
    for (const [fields, field] of [
      [{ partyId: String(world.otherPmc.id) }, 'partyId'],
      [{ documentId: String(foreignDocument.id) }, 'documentId'],
      [{ propertyId: String(await buildProperty(api, world.otherPmc.id)) }, 'propertyId'],
    ] as const) {
      const problem = await expectProblem(await postForm(fileForm(randomBytes(10), { fields })), 400);
      expect(Object.keys(problem.errors ?? {})).toEqual([field]);
    }
    expect(await snapshot()).toEqual(before);
  });

  it('answers 413 for a file over FILE_UPLOAD_LIMIT and stores nothing', async () => {
    const registration = await subscribe(api, world.pmc.id, 'File');
    const atLimit = await upload(randomBytes(LIMIT), { name: 'genau.bin', type: 'application/octet-stream' });
    expect(atLimit.sizeBytes).toBe(LIMIT);
    const before = await snapshot();
    for (const size of [LIMIT + 1, LIMIT * 3, 256 * 1024]) {
      const problem = await expectProblem(await postForm(fileForm(randomBytes(size))), 413);
      expect(problem.detail).toBe(`A file part may hold at most ${LIMIT} bytes`);
    }
    expect(await snapshot()).toEqual(before);
    expect(await api.db.knex('webhooks').where({ registration_id: registration }).count({ n: '*' })).toEqual([
      { n: 1 },
    ]);
  });

  it('refuses a missing, repeated or misplaced file part and bad fields with a 400, writing nothing', async () => {
    const before = await snapshot();
    const expectRefused = async (form: FormData, errors: Record<string, unknown>) => {
      const problem = await expectProblem(await postForm(form), 400);
      expect(problem.errors, JSON.stringify([...form.keys()])).toEqual(errors);
    };
    const onlyFields = new FormData();
    onlyFields.append('documentId', '1');
    await expectRefused(onlyFields, { file: ['Required'] });

    const twice = fileForm();
    twice.append('file', new Blob(['second'], { type: 'text/plain' }), 'zwei.txt');
    await expectRefused(twice, { file: ['Given 2 times; send one file part'] });

    const asText = new FormData();
    asText.append('file', 'not a file');
    await expectRefused(asText, { file: ['Must be a file part (with a filename and a Content-Type)'] });

    const otherPart = fileForm();
    otherPart.append('attachment', new Blob(['x'], { type: 'text/plain' }), 'x.txt');
    await expectRefused(otherPart, { attachment: ['Unknown file part; send only "file"'] });

    await expectRefused(fileForm(randomBytes(10), { fields: { documentId: 'abc' } }), {
      documentId: ['must be a whole number'],
    });
    await expectRefused(fileForm(randomBytes(10), { fields: { documentId: '0' } }), {
      documentId: ['must be at least 1'],
    });
    await expectRefused(fileForm(randomBytes(10), { fields: { sha256: 'x' } }), {
      sha256: ['Unknown field'],
    });
    await expectRefused(fileForm(randomBytes(10), { fields: { fileName: 'a/b.pdf' } }), {
      fileName: ['must not contain path separators (/ \\) or control characters'],
    });
    // every problem at once
    const everything = new FormData();
    everything.append('propertyId', 'x');
    await expectRefused(everything, { file: ['Required'], propertyId: ['must be a whole number'] });

    await expectRefused(fileForm(randomBytes(10), { type: 'nonsense' }), {
      file: ['The Content-Type of the file part must be a media type such as application/pdf'],
    });
    await expectRefused(fileForm(randomBytes(10), { name: '\u0007' }), {
      file: ['The file part needs a filename (or send the field fileName)'],
    });
    expect(await snapshot()).toEqual(before);
  });

  it('answers 415 for a body that is not multipart and 400 for none or a broken one', async () => {
    const token = pmcToken();
    const before = await snapshot();
    await expectProblem(
      await api.fetch('/api/files', { method: 'POST', token, json: { fileName: 'x.pdf' } }),
      415,
      {
        detail: 'The request body must be multipart/form-data',
      },
    );
    await expectProblem(
      await postRaw(api, '/api/files', 'abc', { token, contentType: 'application/octet-stream' }),
      415,
    );
    await expectProblem(await postRaw(api, '/api/files', 'abc', { token, contentType: null }), 415);
    await expectProblem(
      await postRaw(api, '/api/files', 'abc', {
        token,
        contentType: 'multipart/form-data; boundary=x',
        headers: { 'content-encoding': 'gzip' },
      }),
      415,
    );
    const empty = await expectProblem(await api.fetch('/api/files', { method: 'POST', token }), 400);
    expect(empty.errors).toEqual({ file: ['Required'] });
    // no boundary, a body cut off in the middle of its part
    await expectProblem(
      await postRaw(api, '/api/files', 'abc', { token, contentType: 'multipart/form-data' }),
      400,
    );
    const cutOff = await rawRequest(api, {
      method: 'POST',
      path: '/api/files',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'multipart/form-data; boundary=XyZ',
        'transfer-encoding': 'chunked',
      },
      chunks: [
        '--XyZ\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\nContent-Type: application/pdf\r\n\r\nhalf a fi',
      ],
    });
    expect(cutOff.status, cutOff.text).toBe(400);
    expect(await snapshot()).toEqual(before);
  });

  it('captures uploads, patches and deletes with the read shape (never the bytes)', async () => {
    const registration = await subscribe(api, world.pmc.id, 'File');
    const deletesOnly = await subscribe(api, world.pmc.id, 'File', [3]);
    const foreign = await subscribe(api, world.otherPmc.id, 'File');
    const documents = await subscribe(api, world.pmc.id, 'Document');
    const token = pmcToken();
    const created = await upload(randomBytes(100));
    const patched = await json<FileRead>(
      await api.fetch(`/api/files/${created.id}`, { method: 'PATCH', token, json: { fileName: 'neu.pdf' } }),
    );
    // an empty patch changes nothing and records nothing
    await json(await api.fetch(`/api/files/${created.id}`, { method: 'PATCH', token, json: {} }));
    await api.fetch(`/api/files/${created.id}`, { method: 'DELETE', token });
    // refused uploads and another party's upload record nothing for this party
    await expectProblem(await postForm(fileForm(randomBytes(LIMIT + 1))), 413);
    await expectProblem(await postForm(fileForm(randomBytes(10), { type: 'nonsense' })), 400);
    const foreignFile = await upload(randomBytes(10), {}, world.otherPmc.full.token);

    const { rows: changes, summary } = await capturedChanges(api);
    expect(summary).toEqual([
      ['File', 1, created.id, world.pmc.id, world.pmc.full.id],
      ['File', 2, created.id, world.pmc.id, world.pmc.full.id],
      ['File', 3, created.id, world.pmc.id, world.pmc.full.id],
      ['File', 1, foreignFile.id, world.otherPmc.id, world.otherPmc.full.id],
    ]);
    expect(changes[0].entity).toEqual(created);
    expect(changes[1].entity).toEqual(patched);
    expect(changes[2].entity).toMatchObject({ id: created.id, deleted: expect.any(String) });
    for (const change of changes) expect(Object.keys(change.entity)).not.toContain('content');

    const webhooks = await webhookRows(api, { columns: ['registration_id', 'entity_change_id'] });
    expect(webhooks).toEqual([
      { registration_id: registration, entity_change_id: changes[0].id },
      { registration_id: registration, entity_change_id: changes[1].id },
      { registration_id: registration, entity_change_id: changes[2].id },
      { registration_id: deletesOnly, entity_change_id: changes[2].id },
      { registration_id: foreign, entity_change_id: changes[3].id },
    ]);
    expect(webhooks.some((w) => w.registration_id === documents)).toBe(false);
  });

  it('rolls back a write that fails at commit: no file change, no entity change, no webhook', async () => {
    const token = pmcToken();
    const file = await upload(randomBytes(100));
    await expectRolledBack(api, {
      partyId: world.pmc.id,
      entityName: 'File',
      table: 'files',
      writes: [
        () => postForm(fileForm(randomBytes(100))),
        () => api.fetch(`/api/files/${file.id}`, { method: 'PATCH', token, json: { fileName: 'neu.pdf' } }),
        () => api.fetch(`/api/files/${file.id}`, { method: 'DELETE', token }),
      ],
    });
  });
});

describe('file names, media types, Content-Disposition, the limit and OpenAPI', () => {
  it('makes a part’s file name safe', () => {
    expect(sanitizeFileName('C:\\Users\\anna\\Mietvertrag.pdf')).toBe('Mietvertrag.pdf');
    expect(sanitizeFileName('/etc/passwd')).toBe('passwd');
    expect(sanitizeFileName('  bericht .pdf  ')).toBe('bericht .pdf');
    expect(sanitizeFileName('a\r\nb\u0000c\u200Bd.txt')).toBe('abcd.txt');
    expect(sanitizeFileName('..')).toBeNull();
    expect(sanitizeFileName('dir/')).toBeNull();
    expect(sanitizeFileName('')).toBeNull();
    expect(sanitizeFileName(null)).toBeNull();
    const long = sanitizeFileName(`${'ä'.repeat(300)}.pdf`)!;
    expect([...long]).toHaveLength(255);
    expect(long.endsWith('ä.pdf')).toBe(true);
  });

  it('accepts media types as Content-Type carries them', () => {
    expect(normalizeMediaType('application/PDF')).toBe('application/pdf');
    expect(normalizeMediaType('image/svg+xml')).toBe('image/svg+xml');
    expect(normalizeMediaType('text/plain; charset="utf-8"')).toBe('text/plain; charset="utf-8"');
    expect(
      normalizeMediaType('application/vnd.openxmlformats-officedocument.wordprocessingml.document'),
    ).toBe('application/vnd.openxmlformats-officedocument.wordprocessingml.document');
    for (const bad of [
      '',
      'pdf',
      'text/',
      '/plain',
      'text/plain; charset',
      'text/plain\r\nX-Evil: 1',
      'a b/c',
    ]) {
      expect(normalizeMediaType(bad), bad).toBeNull();
    }
  });

  it('writes an ASCII fallback and the exact UTF-8 name', () => {
    expect(attachmentDisposition('plan.pdf')).toBe(
      `attachment; filename="plan.pdf"; filename*=UTF-8''plan.pdf`,
    );
    expect(attachmentDisposition(`Grundriss "EG" 100%'s*.pdf`)).toBe(
      `attachment; filename="Grundriss _EG_ 100_'s*.pdf"; filename*=UTF-8''Grundriss%20%22EG%22%20100%25%27s%2A.pdf`,
    );
  });

  it('limits uploads to 10 MiB unless FILE_UPLOAD_LIMIT says otherwise', () => {
    expect(testConfig({ DATABASE_URL: 'postgres://x@localhost/x' }).FILE_UPLOAD_LIMIT).toBe(10 * 1024 * 1024);
    expect(
      testConfig({ DATABASE_URL: 'postgres://x@localhost/x', FILE_UPLOAD_LIMIT: '512kb' }).FILE_UPLOAD_LIMIT,
    ).toBe(512 * 1024);
    expect(() => testConfig({ DATABASE_URL: 'postgres://x@localhost/x', FILE_UPLOAD_LIMIT: 'lots' })).toThrow(
      /FILE_UPLOAD_LIMIT/,
    );
  });

  it('describes the multipart upload and the binary download in OpenAPI', () => {
    const document: unknown = buildOpenApiDocument(ROUTES);
    /** The value at `keys` inside the generated document. */
    const at = (...keys: string[]): unknown =>
      keys.reduce<unknown>((value, key) => (value as Record<string, unknown> | undefined)?.[key], document);
    const upload = ['paths', '/api/files', 'post'];
    const form = [...upload, 'requestBody', 'content', 'multipart/form-data', 'schema'];
    expect(Object.keys(at(...upload, 'requestBody', 'content') as object)).toEqual(['multipart/form-data']);
    expect(at(...form, 'required')).toEqual(['file']);
    expect(at(...form, 'properties', 'file')).toMatchObject({ type: 'string', format: 'binary' });
    expect(at(...form, 'properties', 'documentId')).toMatchObject({ type: 'integer' });
    expect(Object.keys(at(...upload, 'responses') as object)).toEqual(
      expect.arrayContaining(['200', '400', '413', '415']),
    );
    const download = ['paths', '/api/files/{id}/content', 'get', 'responses', '200'];
    expect(at(...download, 'content', '*/*', 'schema')).toMatchObject({ type: 'string', format: 'binary' });
    expect(Object.keys(at(...download, 'headers') as object)).toEqual(['Content-Disposition', 'ETag']);
    // the registry's JSON create of File is replaced by the upload, not served beside it
    expect(ROUTES.filter((route) => route.method === 'post' && route.path === '/api/files')).toHaveLength(1);
  });
});
