import {
  PartyType,
  WebhookNotificationSettingsRead,
  WebhookNotificationSettingsWrite,
} from '@platform/shared';
import { z } from 'zod';
import { defineRoute, type RouteDefinition } from '../../http/route';
import { pathId } from '../../http/validate';
import { readNotificationSettings, writeNotificationSettings } from './webhook-notification-service';

const tags = ['WebhookNotifications'];
const params = z.strictObject({ partyId: pathId });
const allow = [PartyType.Admin, PartyType.PropertyManagementCompany];

export const webhookNotificationRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'get',
    path: '/api/webhook-notifications/:partyId',
    summary: 'A party’s notifications to operators',
    description:
      'Who is told, by mail and by the optional operator webhook, when a registration of the party ' +
      'is disabled or an endpoint’s breaker stays open longer than `breakerOpenMinutes` ' +
      '(docs/admin.md#notifications). The defaults when the party set none. A party outside the ' +
      'caller’s scope is a 404.',
    tags,
    auth: { allow, permission: 'Webhook.Read' },
    params,
    response: { description: 'The settings', schema: WebhookNotificationSettingsRead },
    errors: [404],
    handler: ({ deps, principal, params }) => readNotificationSettings(deps, principal, params.partyId),
  }),
  defineRoute({
    method: 'put',
    path: '/api/webhook-notifications/:partyId',
    summary: 'Set a party’s notifications to operators',
    description:
      'Replaces the settings. The operator webhook’s signing secret is created the first time a URL ' +
      'is set and answered only then (`signingSecret`); it stays while a URL is set. Audited as ' +
      '`notifications.update`.',
    tags,
    auth: { allow, permission: 'Webhook.Update' },
    params,
    body: WebhookNotificationSettingsWrite,
    response: { description: 'The settings as saved', schema: WebhookNotificationSettingsRead },
    errors: [404],
    handler: ({ deps, principal, params, body }) =>
      writeNotificationSettings(deps, principal, params.partyId, body),
  }),
];
