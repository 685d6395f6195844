import { useState } from 'react';
import { Button } from '../../../components/ui/button';
import { useToast } from '../../../components/ui/toast';
import { errorMessage } from '../../../lib/api-client';
import { formatCount } from '../../../lib/format';
import { readWebhooksForExport } from '../api/export-webhooks';
import type { WebhookFilters } from '../utils/webhook-filters';
import { CSV_EXPORT_LIMIT, webhooksCsv } from '../utils/webhooks-csv';

/** `webhooks-20261127-101500.csv`, in UTC. */
function fileName(now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `webhooks-${stamp}.csv`;
}

/** Downloads every webhook the filters match (all pages, up to CSV_EXPORT_LIMIT) as a CSV file. */
export function ExportCsvButton({ filters }: { filters: WebhookFilters }) {
  const toast = useToast();
  const [busy, setBusy] = useState(false);
  const run = async () => {
    setBusy(true);
    try {
      const { webhooks, totalCount, totalCountCapped, cut } = await readWebhooksForExport(filters);
      const url = URL.createObjectURL(new Blob([webhooksCsv(webhooks)], { type: 'text/csv;charset=utf-8' }));
      const link = document.createElement('a');
      link.href = url;
      link.download = fileName(new Date());
      link.click();
      window.setTimeout(() => URL.revokeObjectURL(url), 10_000);
      if (cut) {
        toast.error(
          `Exported the first ${formatCount(CSV_EXPORT_LIMIT)} of ${formatCount(totalCount)}${totalCountCapped ? '+' : ''} webhooks (oldest first): narrow the filters to export the rest.`,
        );
      } else
        toast.success(`Exported ${formatCount(webhooks.length)} webhook${webhooks.length === 1 ? '' : 's'}.`);
    } catch (error) {
      toast.error(`The export failed: ${errorMessage(error)}`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Button size="small" busy={busy} onClick={() => void run()}>
      Export CSV
    </Button>
  );
}
