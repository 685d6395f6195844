import type { Knex } from 'knex';
import * as identity from './20261122000000_identity';
import * as webhooks from './20261122000100_webhooks';
import * as mfa from './20261122000200_mfa';
import * as properties from './20261122000300_properties';
import * as realEstate from './20261122000400_real_estate';
import * as processes from './20261122000500_processes';
import * as documents from './20261122000600_documents';
import * as conferences from './20261122000700_conferences';
import * as parties from './20261122000800_parties';
import * as webhookApi from './20261122000900_webhook_api';
import * as webhookMaintenance from './20261122001100_webhook_maintenance';
import * as queueFunctions from './20261125000000_queue_functions';
import * as deliveryIsolation from './20261126000000_delivery_isolation';
import * as operatorRecovery from './20261127000000_operator_recovery';
import * as replay from './20261127000300_replay';
import * as timePartitions from './20261128000000_time_partitions';
import * as conferenceRoles from './20261129000000_conference_roles';
import * as traceContext from './20261129120000_trace_context';
import * as endpointIsolation from './20261130000000_endpoint_isolation';
import * as endpointHoldRate from './20261201000000_endpoint_hold_rate';
import * as awaitingIndex from './20261201100000_awaiting_index';
import * as webhookPortalSessions from './20261201200000_webhook_portal_sessions';
import * as operatorNotifications from './20261202000000_operator_notifications';
import * as attemptExchange from './20261202100000_attempt_exchange';
import * as payloadSearch from './20261202100100_payload_search';
import * as statsTargetFailures from './20261202400000_stats_target_failures';
import * as payloadWords from './20261202500000_payload_words';
import * as tenantBucket from './20261203000000_tenant_bucket';
import * as bucketNotNull from './20261204000000_bucket_not_null';

/**
 * Every migration, in order. Listed explicitly rather than read from the folder, so the same
 * list runs under tsx, vitest and bundlers. Forward-only: add a file, never change what a landed
 * one does to the schema. Functions are not theirs: `src/queue/functions/`, written after them.
 */
export const MIGRATIONS: ReadonlyArray<
  readonly [name: string, migration: { up(knex: Knex): Promise<void>; config?: { transaction?: boolean } }]
> = [
  ['20261122000000_identity', identity],
  ['20261122000100_webhooks', webhooks],
  ['20261122000200_mfa', mfa],
  ['20261122000300_properties', properties],
  ['20261122000400_real_estate', realEstate],
  ['20261122000500_processes', processes],
  ['20261122000600_documents', documents],
  ['20261122000700_conferences', conferences],
  ['20261122000800_parties', parties],
  ['20261122000900_webhook_api', webhookApi],
  ['20261122001100_webhook_maintenance', webhookMaintenance],
  ['20261125000000_queue_functions', queueFunctions],
  ['20261126000000_delivery_isolation', deliveryIsolation],
  ['20261127000000_operator_recovery', operatorRecovery],
  ['20261127000300_replay', replay],
  ['20261128000000_time_partitions', timePartitions],
  ['20261129000000_conference_roles', conferenceRoles],
  ['20261129120000_trace_context', traceContext],
  ['20261130000000_endpoint_isolation', endpointIsolation],
  ['20261201000000_endpoint_hold_rate', endpointHoldRate],
  ['20261201100000_awaiting_index', awaitingIndex],
  ['20261201200000_webhook_portal_sessions', webhookPortalSessions],
  ['20261202000000_operator_notifications', operatorNotifications],
  ['20261202100000_attempt_exchange', attemptExchange],
  ['20261202100100_payload_search', payloadSearch],
  ['20261202400000_stats_target_failures', statsTargetFailures],
  ['20261202500000_payload_words', payloadWords],
  ['20261203000000_tenant_bucket', tenantBucket],
  ['20261204000000_bucket_not_null', bucketNotNull],
];
