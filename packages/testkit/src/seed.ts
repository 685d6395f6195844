import { randomBytes } from 'node:crypto';
import {
  enqueueEntityChange,
  newPartyPlacement,
  partyBucket,
  registrationEventRows,
  type EntityChangeInput,
  type Knex,
} from '@platform/db';
import { createSecretBox, type SecretBox } from '@platform/crypto';
import { PartyType } from '@platform/shared';

/** A Property Management Company party, the kind that registers webhooks (docs/webhooks.md#who-may-call-them); its id. */
export async function seedParty(knex: Knex, name = 'Acme'): Promise<number> {
  const [row] = (await knex('parties')
    .insert({ type: PartyType.PropertyManagementCompany, name, ...(await newPartyPlacement(knex, null)) })
    .returning('id')) as { id: number }[];
  return row!.id;
}

/** The key the seeded secrets are sealed with; handed to the dispatcher process. */
export const TEST_SECRET_KEY = randomBytes(32);
/** Seals and opens secrets as the dispatcher started by `startDispatcher` does. */
export const testSecrets = createSecretBox(TEST_SECRET_KEY);

export interface SeedRegistrationOptions {
  partyId: number;
  targetUrl: string;
  shouldGroup?: boolean;
  shouldGroupContinueAfterFail?: boolean;
  /** WebhookAuthType, 0 by default. */
  authType?: number;
  /** `{ username, password }` or `{ apiKey }`, sealed as the API seals them. */
  credentials?: Record<string, string>;
  /** Subscribed (entityName, type) pairs; every Property event by default. */
  events?: { entityName: string; type: number }[];
  /** Seals the secrets; `testSecrets` (TEST_SECRET_KEY) by default. */
  secrets?: SecretBox;
  /** The Standard Webhooks secret; a random one by default. */
  signingSecret?: string;
}

/**
 * Inserts a registration and its events as the API's create does, credentials and signing secret
 * sealed with TEST_SECRET_KEY (or `options.secrets`). Answers its id, the plain signing secret and
 * the ids of its events, in the order of `options.events`.
 */
export async function seedRegistration(
  knex: Knex,
  options: SeedRegistrationOptions,
): Promise<{ id: number; signingSecret: string; eventIds: number[] }> {
  const signingSecret = options.signingSecret ?? `whsec_${randomBytes(32).toString('base64')}`;
  const secrets = options.secrets ?? testSecrets;
  const events = options.events ?? [1, 2, 3].map((type) => ({ entityName: 'Property', type }));
  return knex.transaction(async (trx) => {
    const [row] = (await trx('webhook_registrations')
      .insert({
        party_id: options.partyId,
        bucket: partyBucket(trx, options.partyId),
        target_url: options.targetUrl,
        should_group: options.shouldGroup ?? false,
        should_group_continue_after_fail: options.shouldGroupContinueAfterFail ?? false,
        auth_type: options.authType ?? 0,
        auth_credentials: options.credentials ? secrets.seal(JSON.stringify(options.credentials)) : null,
        signing_secret: secrets.seal(signingSecret),
      })
      .returning(['id', 'bucket'])) as { id: number; bucket: number }[];
    const eventRows = (await trx('webhook_events')
      .insert(
        registrationEventRows(
          row!,
          events.map((event) => ({ entity_name: event.entityName, type: event.type })),
        ),
      )
      .returning('id')) as { id: number }[];
    return { id: row!.id, signingSecret, eventIds: eventRows.map((event) => event.id) };
  });
}

/**
 * Records one entity change through the queue's enqueue statement, as the API's write path does,
 * and answers the ids of the webhooks it fanned out to. The enqueue's own NOTIFY wakes the
 * dispatchers on commit, naming the heads it wrote (docs/dispatcher.md › The notified rows' claim).
 */
export async function seedChange(knex: Knex, change: EntityChangeInput): Promise<number[]> {
  return knex.transaction(async (trx) => {
    await enqueueEntityChange(trx, change);
    const rows = (await trx('webhooks')
      .where('entity_change_id', trx.raw(`currval('entity_changes_id_seq')`))
      .orderBy('id')
      .select('id')) as { id: number }[];
    return rows.map((r) => r.id);
  });
}

export function propertyChange(
  partyId: number,
  entityId: number,
  extra: Record<string, unknown> = {},
  type: 1 | 2 | 3 = 2,
): EntityChangeInput {
  return {
    entityName: 'Property',
    type,
    entityId,
    entity: { id: entityId, name: `Property ${entityId}`, ...extra },
    initiatorPartyId: partyId,
    initiatorAccountId: null,
  };
}

/** The fields of an Inquiry entity, exactly as docs/resources.md#processes lists them. */
export const SPEC_INQUIRY_FIELDS = [
  'sourceId',
  'categoryId',
  'connectedPartyId',
  'creatorAccountId',
  'creatorAccountRole',
  'receiverPartyId',
  'readStatus',
  'id',
  'report',
  'subject',
  'rejectionResponse',
  'completionResponse',
  'connectedPropertyId',
  'connectedUnitId',
  'associatedProcessId',
  'associatedProcessFeedEntryId',
  'associatedTodoId',
  'priority',
  'readByAccountId',
  'dueDate',
  'created',
  'lastModified',
  'deleted',
] as const;
