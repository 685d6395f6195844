import type { WebhookRegistrationCreated, WebhookState } from '@platform/shared';
import { expect } from 'vitest';
import type { TestApi } from './api';
import { readJson } from './http';

/** A valid registration body subscribing to every Property event; overrides win. */
export function registrationBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    targetUrl: 'https://hooks.example.com/platform',
    enabledEvents: [
      { entityName: 'Property', type: 1 },
      { entityName: 'Property', type: 2 },
      { entityName: 'Property', type: 3 },
    ],
    targetAuthorization: { type: 0 },
    ...overrides,
  };
}

/** POSTs `registrationBody(overrides)` to the API as `token`; the response, whatever it is. */
export function postRegistration(
  api: Pick<TestApi, 'fetch'>,
  token: string,
  overrides: Record<string, unknown> = {},
): Promise<Response> {
  return api.fetch('/api/webhook-registrations', {
    method: 'POST',
    token,
    json: registrationBody(overrides),
  });
}

/** Registers a webhook through the API and answers the create response. */
export async function register(
  api: TestApi,
  token: string,
  overrides: Record<string, unknown> = {},
): Promise<WebhookRegistrationCreated> {
  return readJson<WebhookRegistrationCreated>(await postRegistration(api, token, overrides));
}

/** Creates a property through the API (a change to fan out) and answers its id. */
export async function createProperty(api: TestApi, token: string, name = 'Lindenhof'): Promise<number> {
  const response = await api.fetch('/api/properties', {
    method: 'POST',
    token,
    json: { name, street: 'Lindenstraße', postalCode: '10969', city: 'Berlin' },
  });
  expect(response.status, await response.clone().text()).toBe(200);
  return ((await response.json()) as { id: number }).id;
}

/** Updates a property through the API. */
export async function patchProperty(
  api: TestApi,
  token: string,
  id: number,
  patch: Record<string, unknown>,
): Promise<void> {
  const response = await api.fetch(`/api/properties/${id}`, { method: 'PATCH', token, json: patch });
  expect(response.status, await response.clone().text()).toBe(200);
}

export interface WebhookRowView {
  id: number;
  entity_change_id: number;
  state: WebhookState;
  group_key: string | null;
  group_seq: number | null;
  attempt_count: number;
  completed_at: Date | null;
  locked_by: string | null;
}

/** The webhooks of a registration, in id order, straight from the table. */
export function webhooksOf(api: TestApi, registrationId: number): Promise<WebhookRowView[]> {
  return api.db
    .knex('webhooks')
    .where({ registration_id: registrationId })
    .orderBy('id')
    .select(
      'id',
      'entity_change_id',
      'state',
      'group_key',
      'group_seq',
      'attempt_count',
      'completed_at',
      'locked_by',
    );
}

/**
 * The `webhook_targets` row a registration points at, as a query: `.first()` reads it,
 * `.update(…)` arranges its breaker.
 */
export function targetOf(api: TestApi, registrationId: number) {
  return api.db
    .knex('webhook_targets')
    .whereIn('id', api.db.knex('webhook_registrations').where({ id: registrationId }).select('target_id'));
}

/** The bookkeeping row of a group. */
export async function groupOf(
  api: TestApi,
  registrationId: number,
  groupKey: string,
): Promise<{ next_seq: number; open_count: number }> {
  const row = await api.db
    .knex('webhook_groups')
    .where({ registration_id: registrationId, group_key: groupKey })
    .first('next_seq', 'open_count');
  return row as { next_seq: number; open_count: number };
}

/** Calls an operator action on a webhook. */
export function act(
  api: TestApi,
  token: string,
  id: number,
  action: 'abort' | 'resolve' | 'retry',
): Promise<Response> {
  return api.fetch(`/api/webhooks/${id}/${action}`, { method: 'POST', token });
}

/** The audit actions of a registration's own lifecycle, which setting up a test writes. */
export const REGISTRATION_LIFECYCLE_ACTIONS = [
  'registration.create',
  'registration.update-target',
  'registration.delete',
] as const;

/** The audit rows (`operator_actions`) other than the registrations' lifecycle, for tests of other actions. */
export function auditExceptLifecycle(api: Pick<TestApi, 'db'>) {
  return api.db.knex('operator_actions').whereNotIn('action', REGISTRATION_LIFECYCLE_ACTIONS);
}
