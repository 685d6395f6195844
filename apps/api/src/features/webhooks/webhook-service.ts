import {
  WEBHOOK_ENTITY_NAMES,
  WEBHOOK_SEARCH_COUNT_CAP,
  WebhookAuthType,
  WebhookEntityNameIn,
  WebhookState,
  type Page,
  type WebhookAttemptDetailRead,
  type WebhookAttemptRead,
  type WebhookDetailRead,
  type WebhookRead,
} from '@platform/shared';
import { REDACTED } from '@platform/delivery';
import { deliveryBody, type DeliveryChangeRow, type DeliveryEventRow, type Knex } from '@platform/db';
import { z } from 'zod';
import type { Principal } from '../../auth/principal';
import type { AppDeps } from '../../deps';
import {
  applyFilters,
  applyListSort,
  applySort,
  listQuery,
  timestampText,
  type CollectionSpec,
  type SearchBody,
} from '../../http/collection';
import { AppError } from '../../http/errors';
import type { PageQuery } from '../../http/pagination';
import { paginate } from '../../http/pagination';
import { scopeToRegistrations } from '../../http/scope';
import { wholeNumberText } from '../../http/validate';
import { actorEmailOf } from '../operator-actions/operator-action-service';
import {
  presentAttempt,
  presentWebhook,
  WEBHOOK_COLUMNS,
  WEBHOOK_SUBQUERY_COLUMNS,
  type AttemptRow,
  type WebhookRow,
} from './webhook-presenter';

export const WEBHOOK_COLLECTION: CollectionSpec = {
  fields: {
    id: { column: 'w.id', type: 'bigint' },
    registrationId: { column: 'w.registration_id', type: 'integer' },
    partyId: { column: 'r.party_id', type: 'integer' },
    state: { column: 'w.state', type: 'integer' },
    eventType: { column: 'c.type', type: 'integer' },
    entityName: { column: 'c.entity_name', type: 'string' },
    entityId: { column: 'c.entity_id', type: 'integer' },
    entityChangeId: { column: 'w.entity_change_id', type: 'bigint' },
    attemptCount: { column: 'w.attempt_count', type: 'integer' },
    groupKey: { column: 'w.group_key', type: 'string' },
    initiatorPartyId: { column: 'c.initiator_party_id', type: 'integer' },
    initiatorAccountId: { column: 'c.initiator_account_id', type: 'integer' },
    created: { column: 'w.created', type: 'timestamp' },
    lastModified: { column: 'w.last_modified', type: 'timestamp' },
    completedAt: { column: 'w.completed_at', type: 'timestamp' },
    nextAttemptAt: { column: 'w.next_attempt_at', type: 'timestamp' },
  },
  sortable: [
    'id',
    'registrationId',
    'state',
    'entityName',
    'attemptCount',
    'created',
    'lastModified',
    'completedAt',
    'nextAttemptAt',
  ],
  tieBreaker: 'w.id',
};

/** Ids of webhooks, attempts and changes are bigserial: any safe integer, not just int32. */
export const webhookId = wholeNumberText('', 1, Number.MAX_SAFE_INTEGER);

/** The shortest payload text searched: a shorter prefix would match a large share of all words. */
const PAYLOAD_SEARCH_MIN = 3;

/**
 * The words of a payload as the search index `entity_changes_payload_words` holds them
 * (migration 20261202500000_payload_words): those of the entity's string values only, `simple`
 * (no language, lower case). A query must use this very expression to be served by the index.
 */
const PAYLOAD_WORDS = `jsonb_to_tsvector('simple', e.entity, '["string"]')`;

/**
 * `text` as a tsquery (`to_tsquery('simple', …)`) of its whitespace-separated words, each a
 * prefix (`:*`), ANDed. Each word is quoted, its `'` and `\` escaped, so the operators `& | ! (
 * ) < > : *` and quotes in the text are searched as text, never read as syntax; the quoted word
 * is then split as the index split the payload (`ZX-48213-Mietminderung` into its parts, each a
 * prefix, in a row). A text of no word at all (only punctuation) is an empty query: it matches
 * nothing.
 */
export function payloadWordsQuery(text: string): string {
  return text
    .split(/\s+/)
    .filter((word) => word !== '')
    .map((word) => `'${word.replace(/['\\]/g, (c) => `\\${c}`)}':*`)
    .join(' & ');
}

/**
 * Limits `query` (over `webhooks as w`) to the search `q` (docs/performance.md › Search): the
 * webhooks of the changes whose payload holds every word of `q` (a word or its prefix,
 * case-insensitive, in a string value), a semi-join the planner starts from the full-text index
 * `entity_changes_payload_words` when few changes match (then `webhooks_change` per change), or
 * hashes when most do. A whole number also matches the webhook id, the change id and the entity
 * id (through `entity_changes_entity`, one probe per entity name); each part then is an index
 * condition on `webhooks`, so the planner ORs their bitmaps.
 */
export function applyWebhookSearch(query: Knex.QueryBuilder, q: string): Knex.QueryBuilder {
  const numeric = /^\d+$/.test(q) && Number(q) <= Number.MAX_SAFE_INTEGER ? Number(q) : undefined;
  const payload = q.length >= PAYLOAD_SEARCH_MIN;
  return query.where((match) => {
    if (numeric !== undefined) {
      match.orWhere('w.id', numeric).orWhere('w.entity_change_id', numeric);
      if (numeric <= 2147483647) {
        match.orWhereRaw(
          `w.entity_change_id = any(array(select e.id from entity_changes e
              where e.entity_name = any(?::text[]) and e.entity_id = ?))`,
          [[...WEBHOOK_ENTITY_NAMES], numeric],
        );
      }
    }
    if (payload) {
      const matching = `select e.id from entity_changes e where ${PAYLOAD_WORDS} @@ to_tsquery('simple', ?)`;
      // beside the ids, an IN would be a subplan run per webhook (Postgres cannot pull a sublink
      // out of an OR): the matching changes are read once into an array instead
      match.orWhereRaw(
        numeric === undefined
          ? `w.entity_change_id in (${matching})`
          : `w.entity_change_id = any(array(${matching}))`,
        [payloadWordsQuery(q)],
      );
    }
  });
}

/** GET /api/webhooks: paging and sorting, plus one optional filter per query parameter. */
export const WebhookListQuery = listQuery(WEBHOOK_COLLECTION)
  .extend({
    state: wholeNumberText('state', WebhookState.Created, WebhookState.Resolved).optional().meta({
      description: '1 Created, 2 Retrying, 3 Successful, 4 Failed, 5 Aborted, 6 Pending, 7 Resolved.',
    }),
    registrationId: wholeNumberText('registrationId', 1, 2147483647).optional(),
    entityName: WebhookEntityNameIn.optional(),
    entityId: wholeNumberText('entityId', 1, 2147483647).optional(),
    createdFrom: timestampText('createdFrom').optional().meta({ description: 'Created at or after.' }),
    createdTo: timestampText('createdTo').optional().meta({ description: 'Created before.' }),
    q: z
      .string()
      .trim()
      .max(200, 'q must be at most 200 characters')
      .refine((text) => text === '' || /^\d+$/.test(text) || text.length >= PAYLOAD_SEARCH_MIN, {
        message: `q must be a number (an id) or at least ${PAYLOAD_SEARCH_MIN} characters of payload text`,
      })
      .optional()
      .meta({
        description:
          'Search: a webhook whose payload (its entity as recorded) holds every word of this text, each ' +
          'as a whole word or the beginning of one, in a string value (not a key, number or boolean), ' +
          `case-insensitive (from ${PAYLOAD_SEARCH_MIN} characters): \`Lindenstr\` finds "Lindenstraße 5", ` +
          '`straße` does not; punctuation splits words (`ZX-48213` finds "ref ZX-48213/2"). A whole number ' +
          'also finds the webhook of that id, the webhooks of the recorded change (event) of that id, and ' +
          'those of the entity of that id.',
      }),
  })
  .superRefine((query, ctx) => {
    if (query.createdFrom && query.createdTo && Date.parse(query.createdFrom) > Date.parse(query.createdTo)) {
      ctx.addIssue({
        code: 'custom',
        path: ['createdTo'],
        message: 'createdTo must not be before createdFrom',
      });
    }
  });
export type WebhookListQuery = z.infer<typeof WebhookListQuery>;

/**
 * Webhooks the caller may see: those of registrations of its scope (Admin all), including
 * registrations since deleted, whose history stays readable. The registration's party is joined
 * for its name (by primary key, so a page's count stays cheap).
 */
export function visibleWebhooks(knex: Knex, principal: Principal): Knex.QueryBuilder {
  const query = knex('webhooks as w')
    .join('webhook_registrations as r', 'r.id', 'w.registration_id')
    .join('entity_changes as c', 'c.id', 'w.entity_change_id')
    .join('parties as p', 'p.id', 'r.party_id')
    .select(WEBHOOK_COLUMNS)
    .select(WEBHOOK_SUBQUERY_COLUMNS.map((column) => knex.raw(column)))
    .select(actorEmailOf(knex, principal, 'w.last_action_id').as('last_action_email'));
  return scopeToRegistrations(query, 'r', principal);
}

/**
 * The visible webhooks matching the query's filters, sorted as asked: the statement a page of
 * `listWebhooks` reads (and `bench/search-mode.ts` times).
 */
export function webhookListQuery(
  knex: Knex,
  principal: Principal,
  list: WebhookListQuery,
): Knex.QueryBuilder {
  const query = visibleWebhooks(knex, principal);
  if (list.state !== undefined) query.where('w.state', list.state);
  if (list.registrationId !== undefined) query.where('w.registration_id', list.registrationId);
  if (list.entityName !== undefined) query.where('c.entity_name', list.entityName);
  if (list.entityId !== undefined) query.where('c.entity_id', list.entityId);
  if (list.createdFrom !== undefined) query.where('w.created', '>=', list.createdFrom);
  if (list.createdTo !== undefined) query.where('w.created', '<', list.createdTo);
  if (list.q !== undefined && list.q !== '') applyWebhookSearch(query, list.q);
  return applyListSort(query, WEBHOOK_COLLECTION, list);
}

/** Postgres's code for a statement cancelled by `statement_timeout`. */
const QUERY_CANCELED = '57014';

/**
 * A page of the visible webhooks matching the query's filters, sorted as asked. A search counts
 * its matches up to WEBHOOK_SEARCH_COUNT_CAP (`totalCountCapped` past it), so a word in most
 * payloads answers as fast as a rare one (docs/performance.md › Search), and runs under
 * WEBHOOK_SEARCH_TIMEOUT: a search must not hold a connection for a minute whatever its plan;
 * past the limit it is a 400 naming the fix.
 */
export async function listWebhooks(
  deps: AppDeps,
  principal: Principal,
  list: WebhookListQuery,
): Promise<Page<WebhookRead>> {
  if (list.q === undefined || list.q === '') {
    return paginate(webhookListQuery(deps.knex, principal, list), list, presentWebhook);
  }
  try {
    return await deps.knex.transaction(async (trx) => {
      await trx.raw(`set local statement_timeout = ${Math.round(deps.config.WEBHOOK_SEARCH_TIMEOUT)}`);
      return paginate(webhookListQuery(trx, principal, list), list, presentWebhook, WEBHOOK_SEARCH_COUNT_CAP);
    });
  } catch (error) {
    if ((error as { code?: string }).code !== QUERY_CANCELED) throw error;
    throw new AppError(
      'BadRequest',
      `The search "${list.q}" matches too many webhooks to count within ` +
        `${deps.config.WEBHOOK_SEARCH_TIMEOUT / 1000} s: narrow it with a longer text, or with the ` +
        'registration, state or creation time filters',
    );
  }
}

/** A page of the visible webhooks matching the search. */
export function searchWebhooks(
  deps: AppDeps,
  principal: Principal,
  page: PageQuery,
  search: SearchBody,
): Promise<Page<WebhookRead>> {
  const filtered = applyFilters(visibleWebhooks(deps.knex, principal), WEBHOOK_COLLECTION, search);
  return paginate(applySort(filtered, WEBHOOK_COLLECTION, search.sort), page, presentWebhook);
}

/** The visible webhook `id`; 404 otherwise. */
export async function findWebhook(knex: Knex, principal: Principal, id: number): Promise<WebhookRow> {
  const row: WebhookRow | undefined = await visibleWebhooks(knex, principal).where('w.id', id).first();
  if (!row) throw new AppError('NotFound', `Webhook ${id} was not found`);
  return row;
}

/** One visible webhook with the body it delivers (docs/webhooks.md#the-delivery-request). */
export async function readWebhook(
  deps: AppDeps,
  principal: Principal,
  id: number,
): Promise<WebhookDetailRead> {
  const row = await findWebhook(deps.knex, principal, id);
  return { ...presentWebhook(row), payload: await webhookBody(deps.knex, row) };
}

/** The body a webhook delivers, rebuilt from its recorded change and its event (`deliveryBody`). */
async function webhookBody(knex: Knex, row: WebhookRow) {
  const [change, event] = await Promise.all([
    knex
      .from('entity_changes')
      .where({ id: row.entity_change_id })
      .first<DeliveryChangeRow>('entity', 'initiator_party_id', 'initiator_account_id'),
    knex.from('webhook_events').where({ id: row.event_id }).first<DeliveryEventRow>('*'),
  ]);
  // the token of authorization type 3 is minted at delivery and never stored, so it is not shown
  return deliveryBody(change!, event!);
}

/**
 * One attempt of a visible webhook (404 for either unknown) with the body it sent: the
 * webhook's own, rebuilt rather than stored again with every attempt (docs/dispatcher.md › What
 * an attempt records). A registration of authorization type 3 sent a bearer token in the body,
 * minted per delivery and never stored: it shows as `[redacted]`, like every credential.
 */
export async function readAttempt(
  deps: AppDeps,
  principal: Principal,
  id: number,
  attemptId: number,
): Promise<WebhookAttemptDetailRead> {
  const webhook = await findWebhook(deps.knex, principal, id);
  const row = (await deps.knex('webhook_attempts').where({ id: attemptId, webhook_id: id }).first()) as
    AttemptRow | undefined;
  if (!row) throw new AppError('NotFound', `Attempt ${attemptId} of webhook ${id} was not found`);
  const attempt = presentAttempt(row);
  if (!attempt.sentRequest) return { ...attempt, requestBody: null };
  const body = await webhookBody(deps.knex, webhook);
  const authType = (await deps
    .knex('webhook_registrations')
    .where({ id: webhook.registration_id })
    .first('auth_type')) as { auth_type: number } | undefined;
  return {
    ...attempt,
    requestBody:
      authType?.auth_type === WebhookAuthType.PlatformBearerInBody
        ? { ...body, platformSignedBearerToken: REDACTED }
        : body,
  };
}

/** The attempts of a visible webhook, newest first. */
export async function listAttempts(
  deps: AppDeps,
  principal: Principal,
  id: number,
  page: PageQuery,
): Promise<Page<WebhookAttemptRead>> {
  await findWebhook(deps.knex, principal, id);
  const query = deps
    .knex('webhook_attempts')
    .where({ webhook_id: id })
    // newest first: a recover starts the attempt numbers again at 1
    .orderBy('id', 'desc');
  return paginate(query, page, (row: AttemptRow) => presentAttempt(row));
}
