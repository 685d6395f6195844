import type { WebhookRegistrationHealth, WebhookRegistrationStatus } from '@platform/shared';
import { formatCount, formatPercent, successRateTone } from '../../../lib/format';

/**
 * A registration's status and when it last changed, as one comparable value: the registration
 * read and its health answer disagree when the status moved on between the two reads.
 */
export function statusVersion(read: {
  status: WebhookRegistrationStatus;
  statusChanged: string | null;
}): string {
  return `${read.status}@${read.statusChanged === null ? '' : Date.parse(read.statusChanged)}`;
}

/** What a registration's health badge says: the last hour's success rate and whether it is failing. */
export function healthBadge(health: Pick<WebhookRegistrationHealth, 'lastHour' | 'failingSince'>): {
  text: string;
  title: string;
  tone: 'good' | 'warn' | 'bad' | undefined;
  failingSince: string | null;
} {
  const { attempts, requests, skipped, successes, successRate } = health.lastHour;
  const skips = skipped === 0 ? '' : ` ${formatCount(skipped)} attempts skipped (no request sent).`;
  return {
    text: attempts === 0 ? 'No attempts' : requests === 0 ? 'No requests' : formatPercent(successRate),
    title:
      attempts === 0
        ? 'No delivery attempts in the last hour.'
        : `Last hour: ${formatCount(successes)} of ${formatCount(requests)} requests succeeded.${skips}`,
    tone: successRateTone(successRate),
    failingSince: health.failingSince,
  };
}
