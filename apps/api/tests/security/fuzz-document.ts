/**
 * The fuzz run's view of the OpenAPI document: every operation with its parameters and body
 * schema, plus what the document does not state (who may call it, whether it answers text).
 */

export type Schema = Record<string, unknown>;

export interface Parameter {
  in: 'path' | 'query' | 'header' | 'cookie';
  name: string;
  required?: boolean;
  schema?: Schema;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, { parameters?: Parameter[]; requestBody?: RequestBody }>>;
  components?: { schemas?: Record<string, Schema> };
}

interface RequestBody {
  content: Record<string, { schema: Schema }>;
}

/** One operation of the document, as the fuzz run needs it. */
export interface Operation {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** The document's path template, `/api/accounts/{id}`. */
  path: string;
  pathParams: Parameter[];
  queryParams: Parameter[];
  /** The JSON or multipart request body, if the operation takes one. */
  body?: { mediaType: 'application/json' | 'multipart/form-data'; schema: Schema };
  /**
   * Public (no token) or who may call it: party types, and whether an endpoint-portal token may
   * (`portal`: the route is in PORTAL_ROUTE_RULES; `portalOnly`: no other token may).
   */
  auth: 'public' | { allow: readonly number[]; portal?: boolean; portalOnly?: boolean };
  /** Answers `text/plain` and `text/json` too. */
  textual: boolean;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** Every operation of `document`; `describe` adds what the document does not say (the guards). */
export function operationsOf(
  document: OpenApiDocument,
  describe: (method: Operation['method'], path: string) => Pick<Operation, 'auth' | 'textual'>,
): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const parameters = operation.parameters ?? [];
      const content = operation.requestBody?.content ?? {};
      const mediaType = (['application/json', 'multipart/form-data'] as const).find((type) => content[type]);
      operations.push({
        method,
        path,
        pathParams: parameters.filter((p) => p.in === 'path'),
        queryParams: parameters.filter((p) => p.in === 'query'),
        body: mediaType ? { mediaType, schema: content[mediaType]!.schema } : undefined,
        ...describe(method, path),
      });
    }
  }
  return operations;
}
