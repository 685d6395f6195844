import type { WebhookRead } from '@platform/shared';
import { CSV_EXPORT_LIMIT, CSV_EXPORT_PAGE_SIZE } from '../utils/webhooks-csv';
import type { WebhookFilters } from '../utils/webhook-filters';
import { getWebhooks } from './get-webhooks';

/**
 * Every webhook matching the table's filters (not its page), read through `GET /api/webhooks`
 * page by page in id order, oldest first: a webhook created meanwhile lands after the pages
 * already read, so none is read twice or skipped for it. Stops at `CSV_EXPORT_LIMIT`.
 */
export async function readWebhooksForExport(
  filters: WebhookFilters,
  signal?: AbortSignal,
): Promise<{ webhooks: WebhookRead[]; totalCount: number; totalCountCapped: boolean; cut: boolean }> {
  const seen = new Set<number>();
  const webhooks: WebhookRead[] = [];
  let totalCount = 0;
  // a search's count stops at a cap: "at least", so more match than were read
  let totalCountCapped = false;
  for (let page = 1; webhooks.length < CSV_EXPORT_LIMIT; page++) {
    const read = await getWebhooks(
      { ...filters, sort: 'id', ascending: true, page, pageSize: CSV_EXPORT_PAGE_SIZE },
      signal,
    );
    if (page === 1) {
      totalCount = read.totalCount;
      totalCountCapped = read.totalCountCapped ?? false;
    }
    for (const webhook of read.items) {
      if (seen.has(webhook.id) || webhooks.length >= CSV_EXPORT_LIMIT) continue;
      seen.add(webhook.id);
      webhooks.push(webhook);
    }
    if (!read.hasNextPage) break;
  }
  return { webhooks, totalCount, totalCountCapped, cut: totalCountCapped || totalCount > webhooks.length };
}
