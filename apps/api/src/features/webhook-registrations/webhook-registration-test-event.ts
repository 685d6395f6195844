import { randomUUID } from 'node:crypto';
import {
  buildDeliveryRequest,
  createWebhookTokenSource,
  Deliverer,
  type DeliveryMessage,
  type DeliveryOutcome,
  type DeliveryRequest,
} from '@platform/delivery';
import { deliveryEventFields, type WebhookEvent } from '@platform/db';
import {
  WebhookEventType,
  type WebhookTestEntity,
  type WebhookTestRequest,
  type WebhookTestResult,
} from '@platform/shared';
import type { Principal } from '../../auth/principal';
import type { AppDeps } from '../../deps';
import { AppError, fieldError } from '../../http/errors';
import { recordOperatorAction } from '../operator-actions/operator-action-service';
import { runWrite } from '../../write-path';
import { visibleRegistrations } from './webhook-registration-service';

/**
 * The entity a test event carries (`WebhookTestEntity`): no real record, so a receiver cannot
 * mistake it for one and nothing of the party's data leaves for a target the operator is still
 * checking.
 */
export const TEST_EVENT_ENTITY: WebhookTestEntity = { id: 0, test: true };

/** The header that tells a receiver this delivery is a test event. */
export const TEST_EVENT_HEADER = 'x-webhook-test';

const EVENT_TYPE_NAMES = new Map<number, string>(
  Object.entries(WebhookEventType).map(([name, value]) => [value, name]),
);
const eventLabel = (entityName: string | undefined, type: number | undefined) =>
  [entityName, type === undefined ? undefined : `${type} (${EVENT_TYPE_NAMES.get(type)})`]
    .filter(Boolean)
    .join(' ');

/**
 * The subscribed event a test event is sent as: the first (oldest) one matching what was asked,
 * by default the registration's first. Asking for one it does not subscribe to is a 400 on the
 * field that does not match, naming the subscribed events.
 */
function chooseEvent(id: number, events: WebhookEvent[], request: WebhookTestRequest): WebhookEvent {
  const match = events.find(
    (event) =>
      (request.entityName === undefined || event.entity_name === request.entityName) &&
      (request.type === undefined || event.type === request.type),
  );
  if (match) return match;
  const field =
    request.entityName !== undefined && !events.some((event) => event.entity_name === request.entityName)
      ? 'entityName'
      : 'type';
  const subscribed = events.map((event) => eventLabel(event.entity_name, event.type)).join(', ');
  throw fieldError(
    field,
    `Webhook registration ${id} does not subscribe to ${eventLabel(request.entityName, request.type)}; ` +
      `it subscribes to ${subscribed}`,
  );
}

/** What a test event answers when its request could not be built (as the dispatcher records `internal`). */
const internalOutcome = (): DeliveryOutcome => ({
  startedAt: new Date(),
  durationMs: 0,
  statusCode: null,
  errorKind: 'internal',
  responseBody: null,
});

/**
 * Sends one test event to a registration's target now, from this process, and answers how it
 * went (docs/webhooks.md › Test events). It is a delivery like the dispatcher's, built and sent by
 * the same code (`@platform/delivery`): the body of docs/webhooks.md#the-delivery-request with `TEST_EVENT_ENTITY` for the
 * chosen event, the registration's authorization (every type, the platform-signed token
 * included) and its Standard Webhooks signature (both signatures during a rotation's overlap),
 * the same private-address refusal, timeout, excerpt and redaction, plus `x-webhook-test: 1`.
 * Its `webhook-id` is `test_<uuid>`, never a webhook's id, so a receiver's dedupe neither drops it
 * nor later drops a real delivery.
 *
 * A failing target is still an answer (`errorKind`), not an error. Nothing is written but the
 * audit row (`registration.test`): no webhook, no attempt, no breaker or health figure. A test is
 * no retry: the target's breaker is left as it is (a resume or retry half-opens it), and a paused
 * or disabled registration is tested all the same, which is how an operator checks an endpoint
 * before resuming it. 404 when the registration is unknown, deleted or out of scope.
 */
export async function sendTestEvent(
  deps: AppDeps,
  principal: Principal,
  id: number,
  request: WebhookTestRequest,
): Promise<WebhookTestResult> {
  const registration = (await visibleRegistrations(deps.knex, principal)
    .where('r.id', id)
    // the previous secret while its overlap lasts, as `webhook_deliveries` reads it
    .select(
      'r.auth_credentials',
      'r.signing_secret',
      deps.knex.raw(
        'webhook_previous_secret(r.previous_signing_secret, r.previous_secret_expires_at) as previous_signing_secret',
      ),
    )
    .first()) as
    | {
        id: number;
        party_id: number;
        target_url: string;
        auth_type: number;
        auth_credentials: string | null;
        signing_secret: string;
        previous_signing_secret: string | null;
      }
    | undefined;
  if (!registration) throw new AppError('NotFound', `Webhook registration ${id} was not found`);
  const events = (await deps
    .knex('webhook_events')
    .where({ registration_id: id })
    .whereNull('deleted')
    .orderBy('id')) as WebhookEvent[];
  const event = chooseEvent(id, events, request);

  const message: DeliveryMessage = {
    id: `test_${randomUUID()}`,
    registration_id: registration.id,
    registration_party_id: registration.party_id,
    target_url: registration.target_url,
    auth_type: registration.auth_type,
    auth_credentials: registration.auth_credentials,
    signing_secret: registration.signing_secret,
    previous_signing_secret: registration.previous_signing_secret,
    entity: TEST_EVENT_ENTITY,
    initiator_party_id: registration.party_id,
    initiator_account_id: principal.accountId === 0 ? null : principal.accountId,
    ...deliveryEventFields(event),
  };
  const outcome = await deliverOnce(deps, message);

  const result: WebhookTestResult = {
    statusCode: outcome.statusCode,
    durationMs: outcome.durationMs,
    errorKind: outcome.errorKind,
    responseExcerpt: outcome.responseBody,
  };
  await runWrite(deps, principal, ({ trx }) =>
    recordOperatorAction(trx, principal, {
      action: 'registration.test',
      registrationId: id,
      changed: 0,
      detail: {
        webhookId: message.id,
        entityName: event.entity_name,
        type: event.type,
        statusCode: result.statusCode,
        errorKind: result.errorKind,
        durationMs: result.durationMs,
      },
    }),
  );
  return result;
}

/**
 * Builds and sends `message` as the dispatcher would, over a pool of its own closed afterwards (a
 * test event is rare; a pool kept for it would hold connections to targets the API never calls
 * again). The bearer token of auth types 2 and 3 is signed anew, with the key the JWKS publishes.
 */
async function deliverOnce(deps: AppDeps, message: DeliveryMessage): Promise<DeliveryOutcome> {
  const signer = deps.tokens.webhookTokenSigner();
  let request: DeliveryRequest;
  try {
    request = await buildDeliveryRequest(message, {
      secrets: deps.secrets,
      bearerToken: createWebhookTokenSource({ knex: deps.knex, ...signer, logger: deps.logger }),
      now: deps.now,
    });
  } catch (error) {
    // its errors name what is wrong, never a credential (delivery-request.ts)
    deps.logger.warn(
      { err: error, registrationId: message.registration_id },
      'test event not built: its request could not be prepared',
    );
    return internalOutcome();
  }
  request.headers[TEST_EVENT_HEADER] = '1';
  const deliverer = new Deliverer({
    timeoutMs: deps.config.WEBHOOK_TIMEOUT,
    allowPrivateTargets: deps.config.ALLOW_PRIVATE_TARGETS,
    connectionsPerOrigin: 1,
  });
  try {
    return await deliverer.deliver(request);
  } finally {
    await deliverer.close();
  }
}
