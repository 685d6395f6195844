import type { RelationMappings } from 'objection';
import { BaseModel, EntityModel } from './base-model';
import type { WebhookDisabledReason, WebhookRegistrationStatus } from '@platform/shared';

/** An event (entity name and change type) a registration subscribes to. */
export class WebhookEvent extends EntityModel {
  static override tableName = 'webhook_events';
  registration_id!: number;
  entity_name!: string;
  type!: number;
  /** Its registration's bucket (`../buckets.ts`). */
  bucket!: number;
}

/**
 * A webhook registration. `auth_credentials` and `signing_secret` are sealed columns no response
 * shows; the webhooks themselves and their queue are plain SQL (`queue/`), not models.
 */
export class WebhookRegistration extends EntityModel {
  static override tableName = 'webhook_registrations';
  party_id!: number;
  target_url!: string;
  should_group!: boolean;
  should_group_continue_after_fail!: boolean;
  auth_type!: number;
  auth_credentials!: string | null;
  signing_secret!: string;
  created_by_account_id!: number | null;
  /** Its endpoint (`webhook_targets`: its party's normalised URL); kept by a trigger from `target_url`. */
  target_id!: number;
  status!: WebhookRegistrationStatus;
  disabled_reason!: WebhookDisabledReason | null;
  /** Deliveries per second at most to its endpoint (null: unlimited); docs/dispatcher.md › Rate limit. */
  rate_limit!: number | null;
  status_changed!: Date | null;
  /** Its party's tenant bucket (`../buckets.ts`), set with `target_id` by the trigger. */
  bucket!: number;
  events?: WebhookEvent[];

  static override get relationMappings(): RelationMappings {
    return {
      /** The live events, in id order (the order a registration lists them). */
      events: {
        relation: BaseModel.HasManyRelation,
        modelClass: WebhookEvent,
        filter: (query) => query.whereNull('webhook_events.deleted').orderBy('webhook_events.id'),
        join: { from: 'webhook_registrations.id', to: 'webhook_events.registration_id' },
      },
    };
  }
}
