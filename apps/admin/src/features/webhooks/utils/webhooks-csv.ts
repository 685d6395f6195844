import type { WebhookRead } from '@platform/shared';
import { eventTypeName, webhookStateName } from '../../../lib/webhook-states';

/**
 * At most this many webhooks in one export: 100 pages of the API's largest page (100). Beyond,
 * the CSV holds the first ones and the console says it was cut; a narrower filter exports the rest.
 */
export const CSV_EXPORT_LIMIT = 10_000;
export const CSV_EXPORT_PAGE_SIZE = 100;

const COLUMNS: readonly [string, (w: WebhookRead) => string | number | null][] = [
  ['id', (w) => w.id],
  ['state', (w) => webhookStateName(w.state)],
  ['registration_id', (w) => w.registrationId],
  ['target_url', (w) => w.targetUrl],
  ['entity_name', (w) => w.entityName],
  ['event', (w) => eventTypeName(w.eventType)],
  ['entity_id', (w) => w.entityId],
  ['group_key', (w) => w.groupKey],
  ['attempts', (w) => w.attemptCount],
  ['last_attempt_at', (w) => w.lastAttemptAt],
  ['last_status', (w) => w.lastStatusCode],
  ['last_error', (w) => w.lastErrorKind],
  ['next_attempt_at', (w) => w.nextAttemptAt],
  ['created', (w) => w.created],
];

/**
 * One CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break; a text that a
 * spreadsheet would run as a formula (`=`, `+`, `-`, `@`, tab, CR first) gets a leading `'`.
 */
export function csvField(value: string | number | null): string {
  if (value === null) return '';
  let text = String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The CSV of webhooks: a header line, then one line per webhook (times as the API's ISO 8601 UTC). */
export function webhooksCsv(webhooks: readonly WebhookRead[]): string {
  const lines = [COLUMNS.map(([name]) => name).join(',')];
  for (const webhook of webhooks) lines.push(COLUMNS.map(([, read]) => csvField(read(webhook))).join(','));
  return `${lines.join('\r\n')}\r\n`;
}
