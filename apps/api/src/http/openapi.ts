import { ProblemDetails } from '@platform/shared';
import { z } from 'zod';
import { isDeepStrictEqual } from 'node:util';
import {
  createDocument,
  createSchema,
  type CreateDocumentOptions,
  type ZodOpenApiOperationObject,
  type ZodOpenApiPathsObject,
  type ZodOpenApiRequestBodyObject,
  type ZodOpenApiResponseObject,
} from 'zod-openapi';
import type { RouteDefinition } from './route';
import { SUPPORTED_API_VERSIONS } from './headers';

const CommonHeaders = z.object({
  'api-version': z
    .enum(SUPPORTED_API_VERSIONS)
    .optional()
    .meta({ description: 'API version; 2.0 when absent.' }),
  'Accept-Language': z
    .string()
    .optional()
    .meta({ description: 'Only en-DE is served; other values fall back to it.' }),
});

const problem = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: ProblemDetails } },
});

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Bad request: the ProblemDetails `errors` name each invalid field.',
  403: 'The caller’s party type, permission or token scope does not allow this operation.',
  404: 'Not found, or outside the caller’s scope.',
  406: 'None of the media types in `Accept` is one this operation answers.',
  409: 'Conflicts with existing data.',
  413: 'The request body is too large.',
  415: 'The request body has a media type this operation does not take.',
  429: 'Rate limited; see `Retry-After`.',
};

/** Bytes of any media type, as a file part or a download carries them. */
const BINARY = { type: 'string', format: 'binary', contentMediaType: 'application/octet-stream' } as const;

/** A multipart/form-data body: the route's text fields plus its file parts. */
function multipartBody(route: RouteDefinition): ZodOpenApiRequestBodyObject {
  const files = route.multipart!.files;
  const parts = Object.fromEntries(files.map((name) => [name, z.string().meta({ ...BINARY })]));
  const fields = route.body ? (route.body as z.ZodObject).shape : {};
  return {
    required: true,
    content: {
      'multipart/form-data': {
        schema: z.strictObject({ ...fields, ...parts }),
        encoding: Object.fromEntries(files.map((name) => [name, { contentType: '*/*' }])),
      },
    },
  };
}

function operation(route: RouteDefinition): ZodOpenApiOperationObject {
  const responses: Record<string, ZodOpenApiResponseObject> = {};
  const status = String(route.status ?? 200);
  const mediaTypes = route.textual ? ['application/json', 'text/plain', 'text/json'] : ['application/json'];
  const binary = route.response?.binary;
  responses[status] = binary
    ? {
        description: route.response!.description,
        headers: Object.fromEntries(
          Object.entries(binary.headers ?? {}).map(([name, description]) => [
            name,
            { description, schema: { type: 'string' } },
          ]),
        ),
        content: { '*/*': { schema: { ...BINARY } } },
      }
    : route.status === 204 || !route.response?.schema
      ? { description: route.response?.description ?? 'No content' }
      : {
          description: route.response.description,
          content: Object.fromEntries(mediaTypes.map((type) => [type, { schema: route.response!.schema! }])),
        };
  // a download answers 304 to an `If-None-Match` that matches its entity tag (BinaryBody.etag)
  if (binary) responses['304'] = { description: 'Not modified: `If-None-Match` matches the ETag. No body.' };
  const errorStatuses = new Set<number>([400, ...(route.errors ?? [])]);
  if (route.auth !== 'public') errorStatuses.add(401).add(403);
  // what the router answers for every route of the kind (router.ts): Accept it cannot serve, and
  // a body too large or of another media type
  if (route.status !== 204 && !binary) errorStatuses.add(406);
  if (route.body || route.multipart) errorStatuses.add(413).add(415);
  for (const code of [...errorStatuses].sort()) {
    responses[String(code)] =
      code === 401
        ? { description: 'Missing, invalid or expired token. No body.' }
        : problem(ERROR_DESCRIPTIONS[code]!);
  }

  const auth = route.auth === 'public' ? undefined : route.auth;
  const gate = auth
    ? `\n\nAllowed party types: ${auth.allow.join(', ')}.` +
      (auth.permission ? ` Permission: ${auth.permission}.` : '') +
      ` Token scopes: ${(auth.scopes ?? ['platform']).join(', ')}.`
    : '';
  return {
    operationId: route.operationId ?? operationIdOf(route),
    summary: route.summary,
    description: (route.description ?? '') + gate || undefined,
    tags: route.tags,
    deprecated: route.deprecated,
    security: auth ? [{ bearer: [] }] : [],
    requestParams: {
      header: CommonHeaders,
      ...(route.params ? { path: route.params as z.ZodObject } : {}),
      ...(route.query ? { query: route.query as z.ZodObject } : {}),
    },
    ...(route.multipart
      ? { requestBody: multipartBody(route) }
      : route.body
        ? {
            requestBody: {
              required: !route.optionalBody,
              content: { 'application/json': { schema: route.body } },
            },
          }
        : {}),
    responses,
  };
}

/**
 * A stable operationId from the method and the path: `post /api/auth/login/mfa` → `postAuthLoginMfa`,
 * `get /api/accounts/:id` → `getAccountsById`. It changes only when the route's method or path does.
 */
export function operationIdOf(route: Pick<RouteDefinition, 'method' | 'path'>): string {
  const words = route.path
    .replace(/^\/api\//, '/')
    .split(/[/-]/)
    .filter(Boolean)
    .map((word) => (word.startsWith(':') ? `By-${word.slice(1)}` : word));
  const camel = words.map((word) =>
    word.replace(/(^|[^A-Za-z0-9]+)([A-Za-z0-9])/g, (_m, _s, c: string) => c.toUpperCase()),
  );
  return route.method + camel.join('');
}

const SCHEMA_OPTIONS: CreateDocumentOptions = {
  override: ({ jsonSchema, zodSchema, io }) => {
    if (zodSchema._zod.def.type === 'date' && io === 'output') {
      jsonSchema.type = 'string';
      jsonSchema.format = 'date-time';
    }
  },
  allowEmptySchema: { custom: true, pipe: true, transform: true },
};

type SchemaObject = ReturnType<typeof createSchema>['components'][string];

/**
 * A body the API sends, as OpenAPI renders an answer's (zod-openapi renders every request body as
 * input, whose objects admit unknown fields), with the named schemas it refers to: for the
 * `webhooks` section, whose request bodies the API sends.
 */
export function sentSchema(schema: z.ZodType) {
  return createSchema(schema, { io: 'output', opts: SCHEMA_OPTIONS });
}

/** The webhooks of a document: its path items (bodies from `sentSchema`) and the schemas they name. */
export interface OpenApiWebhooks {
  paths: ZodOpenApiPathsObject;
  schemas: Record<string, SchemaObject>;
}

/**
 * The OpenAPI 3.1 document of `routes`, generated from the same zod schemas that validate them,
 * with `webhooks`, the requests the API sends (the event catalog), when given.
 */
export function buildOpenApiDocument(
  routes: readonly RouteDefinition[],
  options: { webhooks?: OpenApiWebhooks } = {},
) {
  const paths: ZodOpenApiPathsObject = {};
  for (const route of routes) {
    const path = route.path.replace(/:(\w+)/g, '{$1}');
    paths[path] = { ...paths[path], [route.method]: operation(route) };
  }
  const document = createDocument(
    {
      openapi: '3.1.0',
      info: {
        title: 'Property Management Platform API (Gen2)',
        version: '2.0',
        license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
        description:
          'Gen2 REST API of the property-management platform and its webhooks. Every operation except login, ' +
          'refresh and recovery needs `Authorization: Bearer <accessToken>`.',
      },
      servers: [{ url: '/', description: 'The API server that serves this document' }],
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } },
      paths,
      ...(options.webhooks ? { webhooks: options.webhooks.paths } : {}),
    },
    SCHEMA_OPTIONS,
  );
  // the schemas the webhooks name: those the answers name already are the same objects
  const schemas = (document.components!.schemas ??= {});
  for (const [name, schema] of Object.entries(options.webhooks?.schemas ?? {})) {
    if (!(name in schemas)) schemas[name] = schema;
    else if (!isDeepStrictEqual(schemas[name], schema)) {
      throw new Error(`The webhooks' schema ${name} differs from the answers' schema of that name`);
    }
  }
  return document;
}
