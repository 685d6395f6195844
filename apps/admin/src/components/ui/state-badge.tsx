import { WEBHOOK_STATE_DESCRIPTIONS, webhookStateName } from '../../lib/webhook-states';

/** A webhook state by its spec name, coloured by state. */
export function StateBadge({ state }: { state: number }) {
  return (
    <span
      className={`badge badge--state-${state}`}
      title={WEBHOOK_STATE_DESCRIPTIONS[state]}
      data-testid="webhook-state"
    >
      {webhookStateName(state)}
    </span>
  );
}
