import type { BreakerState } from '@platform/shared';
import { BREAKER_COPY } from '../../lib/registration-health';

/** An endpoint's circuit breaker state (closed, open, half-open), coloured by state. */
export function BreakerBadge({ state }: { state: BreakerState }) {
  return (
    <span className={`badge badge--breaker-${state}`} title={BREAKER_COPY[state].description}>
      {BREAKER_COPY[state].name}
    </span>
  );
}
