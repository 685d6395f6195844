import type { WebhookAuthType, WebhookEventType, WebhookState } from '@platform/shared';
import { BaseModel, EntityModel } from './base-model';

export class WebhookRegistration extends EntityModel {
  static override tableName = 'webhook_registrations';
  partyId!: number;
  targetUrl!: string;
  shouldGroup!: boolean;
  shouldGroupContinueAfterFail!: boolean;
  authType!: WebhookAuthType;
  authCredentials!: string | null;
  signingSecret!: string;
  createdByAccountId!: number | null;
}

export class WebhookEvent extends EntityModel {
  static override tableName = 'webhook_events';
  registrationId!: number;
  entityName!: string;
  type!: WebhookEventType;
}

export class EntityChange extends BaseModel {
  static override tableName = 'entity_changes';
  id!: number;
  entityName!: string;
  type!: WebhookEventType;
  entityId!: number;
  entity!: Record<string, unknown>;
  initiatorPartyId!: number;
  initiatorAccountId!: number | null;
  created!: Date;
}

export class Webhook extends BaseModel {
  static override tableName = 'webhooks';
  id!: number;
  registrationId!: number;
  eventId!: number;
  entityChangeId!: number;
  state!: WebhookState;
  attemptCount!: number;
  nextAttemptAt!: Date;
  groupKey!: string | null;
  groupSeq!: number | null;
  lockedBy!: string | null;
  created!: Date;
  lastModified!: Date | null;
  completedAt!: Date | null;
}

export class WebhookAttempt extends BaseModel {
  static override tableName = 'webhook_attempts';
  id!: number;
  webhookId!: number;
  number!: number;
  startedAt!: Date;
  durationMs!: number;
  statusCode!: number | null;
  errorKind!: string | null;
  responseBody!: string | null;
  created!: Date;
}
