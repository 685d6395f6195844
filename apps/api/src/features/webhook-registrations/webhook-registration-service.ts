import { randomBytes } from 'node:crypto';
import {
  PartyType,
  WebhookAuthType,
  type Page,
  type WebhookRegistrationCreated,
  type WebhookRegistrationPatch,
  type WebhookRegistrationRead,
  type WebhookRegistrationWrite,
  type WebhookTargetAuthorizationWrite,
} from '@platform/shared';
import {
  abortRegistrationWebhooks,
  partyBucket,
  pauseRegistration,
  registrationEventRows,
  resumeRegistration,
  WebhookEvent,
  WebhookRegistration,
  type Knex,
} from '@platform/db';
import type { Principal } from '../../auth/principal';
import type { AppDeps } from '../../deps';
import {
  applyFilters,
  applyListSort,
  applySort,
  type CollectionSpec,
  type ListQuery,
  type SearchBody,
} from '../../http/collection';
import { AppError, fieldError } from '../../http/errors';
import { paginate, type PageQuery } from '../../http/pagination';
import { scopeToRegistrations, seesAllParties } from '../../http/scope';
import { recordOperatorAction } from '../operator-actions/operator-action-service';
import { retryOnDeadlock } from '../webhooks/deadlock-retry';
import { runWrite } from '../../write-path';
import { privateTargetProblem } from './private-target';
import {
  presentRegistration,
  REGISTRATION_COLUMNS,
  REGISTRATION_FIELDS,
  type RegistrationRow,
} from './webhook-registration-presenter';

export const REGISTRATION_COLLECTION: CollectionSpec = {
  fields: {
    id: { column: 'r.id', type: 'integer' },
    partyId: { column: 'r.party_id', type: 'integer' },
    targetUrl: { column: 'r.target_url', type: 'string' },
    shouldGroup: { column: 'r.should_group', type: 'boolean' },
    shouldGroupContinueAfterFail: { column: 'r.should_group_continue_after_fail', type: 'boolean' },
    'targetAuthorization.type': { column: 'r.auth_type', type: 'integer' },
    createdByAccountId: { column: 'r.created_by_account_id', type: 'integer' },
    created: { column: 'r.created', type: 'timestamp' },
    lastModified: { column: 'r.last_modified', type: 'timestamp' },
    status: { column: 'r.status', type: 'string' },
    disabledReason: { column: 'r.disabled_reason', type: 'string' },
    statusChanged: { column: 'r.status_changed', type: 'timestamp' },
  },
  sortable: ['id', 'partyId', 'targetUrl', 'created', 'lastModified'],
  tieBreaker: 'r.id',
};

/** Party types whose parties may hold registrations (docs/webhooks.md#who-may-call-them; Admin for testing its own). */
const REGISTERING_PARTY_TYPES: readonly number[] = [PartyType.Admin, PartyType.PropertyManagementCompany];

/**
 * Live registrations the caller may see: Admin all, others their own party's (and managed ones').
 * Each row carries its party's name (`p`, joined by primary key).
 */
export function visibleRegistrations(knex: Knex, principal: Principal): Knex.QueryBuilder {
  const query = knex('webhook_registrations as r')
    .join('parties as p', 'p.id', 'r.party_id')
    .select(REGISTRATION_COLUMNS)
    .whereNull('r.deleted');
  return scopeToRegistrations(query, 'r', principal);
}

/** The read shapes of `rows`, each with its live events (one query for all of them). */
async function withEvents(knex: Knex, rows: RegistrationRow[]): Promise<WebhookRegistrationRead[]> {
  if (rows.length === 0) return [];
  const registrations = await WebhookRegistration.fetchGraph(rows, 'events', { transaction: knex });
  // fetchGraph answers the rows in their order
  return registrations.map((registration, i) => presentRegistration(rows[i]!, registration.events!));
}

async function pageWithEvents(
  knex: Knex,
  query: Knex.QueryBuilder,
  page: PageQuery,
): Promise<Page<WebhookRegistrationRead>> {
  const rows = await paginate(query, page, (row: RegistrationRow) => row);
  return { ...rows, items: await withEvents(knex, rows.items) };
}

/** A page of the registrations the caller may see, sorted as asked. */
export function listRegistrations(
  deps: AppDeps,
  principal: Principal,
  list: ListQuery,
): Promise<Page<WebhookRegistrationRead>> {
  const query = applyListSort(visibleRegistrations(deps.knex, principal), REGISTRATION_COLLECTION, list);
  return pageWithEvents(deps.knex, query, list);
}

/** A page of the visible registrations matching the search. */
export function searchRegistrations(
  deps: AppDeps,
  principal: Principal,
  page: PageQuery,
  search: SearchBody,
): Promise<Page<WebhookRegistrationRead>> {
  const filtered = applyFilters(visibleRegistrations(deps.knex, principal), REGISTRATION_COLLECTION, search);
  return pageWithEvents(deps.knex, applySort(filtered, REGISTRATION_COLLECTION, search.sort), page);
}

/** Locks a visible registration for a write; 404 when unknown, deleted or out of scope. */
export async function lockVisibleRegistration(
  trx: Knex.Transaction,
  principal: Principal,
  id: number,
): Promise<RegistrationRow> {
  const row: RegistrationRow | undefined = await visibleRegistrations(trx, principal)
    .where('r.id', id)
    // the registration's row only, not its party's
    .forUpdate('r')
    .first();
  if (!row) throw new AppError('NotFound', `Webhook registration ${id} was not found`);
  return row;
}

/** One visible registration; 404 when unknown, deleted or out of scope. */
export async function readRegistration(
  deps: AppDeps,
  principal: Principal,
  id: number,
): Promise<WebhookRegistrationRead> {
  const row: RegistrationRow | undefined = await visibleRegistrations(deps.knex, principal)
    .where('r.id', id)
    .first();
  if (!row) throw new AppError('NotFound', `Webhook registration ${id} was not found`);
  return (await withEvents(deps.knex, [row]))[0]!;
}

/** A 400 on `targetUrl` when it names a private host and private targets are not allowed. */
export function checkTargetAllowed(deps: AppDeps, targetUrl: string, field = 'targetUrl'): void {
  if (deps.config.ALLOW_PRIVATE_TARGETS) return;
  const problem = privateTargetProblem(targetUrl);
  if (problem) throw fieldError(field, problem);
}

/**
 * The party a new registration serves, with its name: an Admin may name any live Admin or Property
 * Management Company party; everyone else registers for their own party.
 */
async function registeringParty(
  trx: Knex.Transaction,
  principal: Principal,
  partyId: number | undefined,
): Promise<{ id: number; name: string }> {
  const own = partyId === undefined || partyId === principal.partyId;
  if (!own && !seesAllParties(principal)) {
    throw fieldError('partyId', 'Only an Admin may register webhooks for another party');
  }
  const id = own ? principal.partyId : partyId;
  const party: { type: number; name: string } | undefined = await trx('parties')
    .where({ id })
    .modify((query) => {
      if (!own) query.whereNull('deleted');
    })
    .first('type', 'name');
  if (own) return { id, name: party!.name };
  if (!party) throw fieldError('partyId', `Party ${id} does not exist`);
  if (!REGISTERING_PARTY_TYPES.includes(party.type)) {
    throw fieldError(
      'partyId',
      `Party ${id} is of type ${party.type}; only Admin (1) and Property Management Company (2) parties use webhooks`,
    );
  }
  return { id, name: party.name };
}

/** The credentials of `auth` as the text to seal, or null for types that carry none. */
function credentialsOf(auth: WebhookTargetAuthorizationWrite): string | null {
  if (auth.type === WebhookAuthType.BasicAuth) {
    return JSON.stringify({ username: auth.username, password: auth.password });
  }
  if (auth.type === WebhookAuthType.TargetApiToken) return JSON.stringify({ apiKey: auth.apiKey });
  return null;
}

/** A new Standard Webhooks signing secret: `whsec_` + base64 of 32 random bytes. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * Creates a registration with one webhook_events row per enabled event. Credentials and the
 * signing secret are stored sealed; the secret is answered this once and never again.
 */
export async function createRegistration(
  deps: AppDeps,
  principal: Principal,
  write: WebhookRegistrationWrite,
): Promise<WebhookRegistrationCreated> {
  checkTargetAllowed(deps, write.targetUrl);
  const signingSecret = newSigningSecret();
  const credentials = credentialsOf(write.targetAuthorization);
  return runWrite(deps, principal, async ({ trx, now }) => {
    const party = await registeringParty(trx, principal, write.partyId);
    const registration = await WebhookRegistration.query(trx)
      .insert({
        party_id: party.id,
        bucket: partyBucket(trx, party.id) as unknown as number,
        target_url: write.targetUrl,
        should_group: write.shouldGroup ?? false,
        should_group_continue_after_fail: write.shouldGroupContinueAfterFail ?? false,
        rate_limit: write.rateLimit ?? null,
        auth_type: write.targetAuthorization.type,
        auth_credentials: credentials === null ? null : deps.secrets.seal(credentials),
        signing_secret: deps.secrets.seal(signingSecret),
        // a portal session (docs/portal.md) acts for no account
        created_by_account_id: principal.accountId === 0 ? null : principal.accountId,
        created: now,
      })
      .returning([...REGISTRATION_FIELDS, 'bucket']);
    // one insert of every event, in the registration's bucket
    const events = await WebhookEvent.query(trx)
      .insert(
        registrationEventRows(
          registration,
          write.enabledEvents.map((event) => ({
            entity_name: event.entityName,
            type: event.type,
            created: now,
          })),
        ),
      )
      .returning('*');
    events.sort((a, b) => a.id - b.id);
    await recordOperatorAction(trx, principal, {
      action: 'registration.create',
      registrationId: registration.id,
      changed: 1,
      detail: { targetUrl: write.targetUrl, partyId: party.id },
    });
    return { ...presentRegistration({ ...registration, party_name: party.name }, events), signingSecret };
  });
}

/** Changes a registration's `targetUrl` and `rateLimit`, the fields that may change (docs/webhooks.md#registrations). */
export async function updateRegistration(
  deps: AppDeps,
  principal: Principal,
  id: number,
  patch: WebhookRegistrationPatch,
): Promise<WebhookRegistrationRead> {
  if (patch.targetUrl !== undefined) checkTargetAllowed(deps, patch.targetUrl);
  return runWrite(deps, principal, async ({ trx, now }) => {
    const current = await lockVisibleRegistration(trx, principal, id);
    if (patch.targetUrl === undefined && patch.rateLimit === undefined)
      return (await withEvents(trx, [current]))[0]!;
    const [row] = await WebhookRegistration.query(trx)
      .patch({
        ...(patch.targetUrl === undefined ? {} : { target_url: patch.targetUrl }),
        ...(patch.rateLimit === undefined ? {} : { rate_limit: patch.rateLimit }),
        last_modified: now,
      })
      .where({ id })
      .returning([...REGISTRATION_FIELDS]);
    await recordOperatorAction(trx, principal, {
      action: 'registration.update-target',
      registrationId: id,
      changed: current.target_url === patch.targetUrl ? 0 : 1,
      detail: { previousTargetUrl: current.target_url, targetUrl: patch.targetUrl },
    });
    return (await withEvents(trx, [{ ...row!, party_name: current.party_name }]))[0]!;
  });
}

/**
 * An operator pauses or resumes a registration's deliveries (`pauseRegistration`,
 * `resumeRegistration`): a pause keeps its webhooks coming but spends no attempt; a resume makes a
 * paused or disabled registration active again. A pause of a paused registration changes nothing;
 * every resume half-opens the target's breaker (the operator says the endpoint is fixed), an
 * active registration's too. Every call is audited (`registration.pause` / `.resume`) in the same
 * transaction, also one that left the status as it was (`changed` 0): a resume of an active
 * registration still half-opened its breaker, and the trail shows who pressed the button.
 * Answers the registration; 404 when unknown, deleted or out of scope.
 */
export function setDeliveryStatus(
  deps: AppDeps,
  principal: Principal,
  id: number,
  action: 'pause' | 'resume',
): Promise<WebhookRegistrationRead> {
  return runWrite(deps, principal, async ({ trx, now }) => {
    const before = await lockVisibleRegistration(trx, principal, id);
    const changed = await (action === 'pause' ? pauseRegistration : resumeRegistration)(trx, id, now);
    const row: RegistrationRow = await visibleRegistrations(trx, principal).where('r.id', id).first();
    await recordOperatorAction(trx, principal, {
      action: `registration.${action}`,
      registrationId: id,
      changed: changed ? 1 : 0,
      detail: { previousStatus: before.status, status: row.status },
    });
    return (await withEvents(trx, [row]))[0]!;
  });
}

/**
 * Soft-deletes a registration and its events and, in the same transaction, aborts its
 * undelivered webhooks (`abortRegistrationWebhooks`). A change whose enqueue statement began
 * before this commit can still add a webhook afterwards: the dispatcher must not deliver webhooks
 * of a deleted registration (docs/webhooks.md).
 */
export function deleteRegistration(deps: AppDeps, principal: Principal, id: number): Promise<void> {
  return retryOnDeadlock(() =>
    runWrite(deps, principal, async ({ trx, now }) => {
      const current = await lockVisibleRegistration(trx, principal, id);
      await trx('webhook_registrations').where({ id }).update({ deleted: now, last_modified: now });
      await trx('webhook_events')
        .where({ registration_id: id })
        .whereNull('deleted')
        .update({ deleted: now, last_modified: now });
      // audited with what it aborted, and each aborted webhook names the delete as its last action
      const actionId = await recordOperatorAction(trx, principal, {
        action: 'registration.delete',
        registrationId: id,
        detail: { targetUrl: current.target_url },
      });
      const aborted = await abortRegistrationWebhooks(trx, { id, bucket: current.bucket }, now, actionId);
      await trx('operator_actions').where({ id: actionId }).update({ changed: aborted });
    }),
  );
}
