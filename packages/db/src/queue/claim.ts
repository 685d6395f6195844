import type { Knex } from 'knex';
import { CLAIM_PARAMETER_NAMES, CLAIM_PARAMETERS, type ClaimParameter } from './functions/webhooks-claim';
import { readDeliveries, type DeliveriesAnswer } from './deliveries';
import { queryPrepared, type PreparedStatement } from './prepared';

/**
 * A claimed webhook with everything one delivery needs, from what `webhook_deliveries`
 * (`functions/webhook-deliveries.ts`) answers (`readDeliveries`): JSON, so its times are ISO strings.
 */
export interface ClaimedWebhook {
  id: number;
  registration_id: number;
  /**
   * The endpoint it goes to (a `webhook_targets` row: its party's normalised URL): the unit of
   * fair scheduling, the adaptive limit and the breaker.
   */
  target_id: number;
  /** The endpoint's origin (scheme, host, port): what the per-host cap counts. */
  origin: string;
  /** The attempt this delivery is (attempt_count after the claim). */
  attempt: number;
  group_key: string | null;
  target_url: string;
  auth_type: number;
  auth_credentials: string | null;
  signing_secret: string;
  /** The secret a rotation replaced, while its overlap lasts (sealed); null otherwise. */
  previous_signing_secret: string | null;
  registration_party_id: number;
  should_group_continue_after_fail: boolean;
  /** The registration was deleted after this webhook was written: the claim aborted it, do not deliver. */
  registration_deleted: boolean;
  /**
   * Its previous lease ran out without a result (the dispatcher holding it died or stopped
   * mid-try): `attempt` is that try, counted then; record it as `interrupted`, do not deliver.
   */
  interrupted: boolean;
  /** The entity snapshot the body carries; null for what is recorded without a request (interrupted, circuit-open). */
  entity: unknown;
  initiator_party_id: number;
  initiator_account_id: number | null;
  event_id: number;
  event_type: number;
  event_entity_name: string;
  event_created: string;
  event_last_modified: string | null;
  event_deleted: string | null;
  /** The W3C trace context of the request that wrote it (tracing on), else null. */
  trace_context: { traceparent: string; tracestate?: string } | null;
}

/** What one claim took, and what the loop needs to know to claim again at the right time. */
export interface Claim {
  leased: ClaimedWebhook[];
  /** Endpoints whose breaker is open: record their webhooks as `circuit-open`, send nothing. */
  openTargets: number[];
  /** A registration had more due work than its share of this batch: claim again at once. */
  more: boolean;
  /**
   * Endpoints that may have more due work than the room they were given: claim again when a slot
   * frees. Not an endpoint held back by its breaker (half-open, its trial in flight): no slot of
   * ours freeing helps it, and claiming again at once for it would spin the loop.
   */
  cappedTargets: number[];
  /** When the claim came back short: the earliest moment more work falls due (null: none known). */
  nextDueAt: Date | null;
  /** Where this claim's walk ended: the next claim's `after`. */
  cursor: number;
  /** The walk passed the highest registration id with claimable rows and went on from the lowest. */
  wrapped: boolean;
}

export interface ClaimOptions {
  batch: number;
  leaseMs: number;
  dispatcherId: string;
  /** Per endpoint the dispatcher knows: how many more of its webhooks it may take now. */
  rooms: ReadonlyMap<number, number>;
  /** The room of an endpoint the dispatcher holds nothing of. */
  defaultRoom: number;
  /** Per endpoint of `rooms`: how many of its webhooks the dispatcher holds (in flight and buffered). */
  held?: ReadonlyMap<number, number>;
  /**
   * What the endpoints of one origin may hold together in this dispatcher (twice
   * DISPATCHER_MAX_PER_HOST: in flight and buffered), shared evenly among those with due work;
   * none: no per-host cap.
   */
  hostRoom?: number;
  /**
   * The round-robin cursor: the registration the previous claim's walk ended at (its `cursor`).
   * The walk starts after it and wraps around; none (0): from the lowest id.
   */
  after?: number;
  /** The shard group to claim from (docs/scaling.md, R2); absent: every bucket, the one database. */
  buckets?: readonly number[];
}

export { CLAIM_PICK_SQL } from './functions/webhooks-claim';

/**
 * The claim as the dispatcher sends it: one bare call of `webhooks_claim`
 * (`functions/webhooks-claim.ts`), its inputs in `CLAIM_PARAMETER_NAMES`' order (`claimBindings`).
 */
export const CLAIM_STATEMENT: PreparedStatement = {
  name: 'webhooks-claim',
  text: `select webhooks_claim(${CLAIM_PARAMETER_NAMES.map(
    (name, index) => `$${index + 1}::${CLAIM_PARAMETERS[name]}`,
  ).join(', ')}) as claim`,
};

/** The claim's inputs by name: the inputs of `CLAIM_STATEMENT` and the bindings of `CLAIM_PICK_SQL`. */
export function claimBindings(options: ClaimOptions): Record<ClaimParameter, Knex.RawBinding> {
  const targets = [...options.rooms.keys()];
  return {
    after: options.after ?? 0,
    batch: options.batch,
    roomless: targets.filter((target) => options.rooms.get(target)! <= 0),
    lease_ms: options.leaseMs,
    dispatcher_id: options.dispatcherId,
    host_room: options.hostRoom ?? null,
    default_room: options.defaultRoom,
    room_targets: targets,
    rooms: [...options.rooms.values()],
    held: targets.map((target) => options.held?.get(target) ?? 0),
    buckets: options.buckets ? [...options.buckets] : null,
  };
}

/**
 * Claims up to `batch` due webhooks with one call (`CLAIM_STATEMENT`, `webhooks_claim`): picks them
 * fairly across endpoints and leases them (`webhooks_lease`) by pushing `next_attempt_at` to now
 * + lease. A dispatcher that dies loses its lease and the rows become due again; the next claim
 * records the lost try as `interrupted`. Also answers which endpoints' breakers are open, which
 * endpoints may have more work than their room, and (when short) when more work falls due, so the
 * loop needs no second query to know how long to sleep.
 */
export async function claimWebhooks(knex: Knex, options: ClaimOptions): Promise<Claim> {
  const bindings = claimBindings(options);
  const rows = await queryPrepared<{
    claim: {
      leased: DeliveriesAnswer;
      open_targets: number[];
      more: boolean;
      capped_targets: number[];
      /** JSON: an ISO time. */
      next_due: string | null;
      cursor: number;
      wrapped: boolean;
    };
  }>(
    knex,
    CLAIM_STATEMENT,
    CLAIM_PARAMETER_NAMES.map((name) => bindings[name]),
  );
  const claim = rows[0]!.claim;
  return {
    leased: readDeliveries(claim.leased),
    openTargets: claim.open_targets,
    more: claim.more,
    cappedTargets: claim.capped_targets,
    nextDueAt: claim.next_due === null ? null : new Date(claim.next_due),
    cursor: claim.cursor,
    wrapped: claim.wrapped,
  };
}

/** What the notified rows' claim needs: the ids a wake-up named, and what the dispatcher holds. */
export interface ClaimNotifiedOptions {
  ids: readonly number[];
  leaseMs: number;
  dispatcherId: string;
  /** As `ClaimOptions.hostRoom`: at most this many of the rows per origin; none, no cap. */
  hostRoom?: number;
  /** The endpoints that have no room in the dispatcher now: their rows are left to the fair claim. */
  fullTargets: readonly number[];
  /** The origins the dispatcher holds webhooks of (in flight or buffered), and how many of each (`originHeld`). */
  origins: readonly string[];
  originHeld: readonly number[];
  /** The shard group the ids are in (docs/scaling.md, R2); absent: every bucket, the one database. */
  buckets?: readonly number[];
}

/** What the notified rows' claim took, and how many named rows it left to the fair claim. */
export interface NotifiedClaim {
  leased: ClaimedWebhook[];
  /** Named rows still claimable that it did not take: above zero, run the fair claim. */
  rest: number;
}

/** The notified rows' claim as the dispatcher sends it: one bare call of `webhooks_claim_notified`. */
export const CLAIM_NOTIFIED_STATEMENT: PreparedStatement = {
  name: 'webhooks-claim-notified',
  text: `select webhooks_claim_notified($1::bigint[], $2::text, $3::float8, $4::int, $5::int[], $6::text[],
    $7::int[], $8::int[]) as claim`,
};

/**
 * Claims the rows a wake-up named (`parseDueIds`) with one call of `webhooks_claim_notified`
 * (`functions/webhooks-claim-notified.ts`), by primary key: those the fair claim would take at
 * once with every rule trivially met, leased as it leases them. For a dispatcher that has no other
 * reason to claim; `rest` above zero says the fair claim (`claimWebhooks`) must run too.
 */
export async function claimNotifiedWebhooks(
  knex: Knex,
  options: ClaimNotifiedOptions,
): Promise<NotifiedClaim> {
  const rows = await queryPrepared<{ claim: { leased: DeliveriesAnswer; rest: number } }>(
    knex,
    CLAIM_NOTIFIED_STATEMENT,
    [
      [...options.ids],
      options.dispatcherId,
      options.leaseMs,
      options.hostRoom ?? null,
      [...options.fullTargets],
      [...options.origins],
      [...options.originHeld],
      options.buckets ? [...options.buckets] : null,
    ],
  );
  const claim = rows[0]!.claim;
  return { leased: readDeliveries(claim.leased), rest: claim.rest };
}
