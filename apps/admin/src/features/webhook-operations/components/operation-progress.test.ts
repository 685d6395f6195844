import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { anOperation } from '../../../../tests/support/operations';
import { OperationProgress } from './operation-progress';

const text = (html: string) => html.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');

const base = anOperation({ id: 3, freshSchedule: true, total: 200, done: 50, changed: 40 });

describe('OperationProgress', () => {
  it('is a progressbar of done out of total while running, with no summary yet', () => {
    const html = renderToStaticMarkup(createElement(OperationProgress, { operation: base }));
    expect(html).toContain('role="progressbar"');
    expect(html).toContain('aria-valuenow="50"');
    expect(html).toContain('aria-valuemax="200"');
    expect(html).toContain('style="width:25%"');
    expect(text(html)).toContain('50 of 200 webhooks');
    expect(text(html)).toContain('40 retried');
    expect(text(html)).toContain('10 not Failed');
    expect(html).toMatch(/data-testid="operation-summary"><\/p>/);
  });

  it('shows the final summary once done, and the error of a failed one', () => {
    const done = renderToStaticMarkup(
      createElement(OperationProgress, {
        operation: { ...base, state: 'done', done: 200, changed: 190, finishedAt: '2026-11-27T10:01:00Z' },
      }),
    );
    expect(text(done)).toContain('Done: 200 webhooks selected, 190 retried, 10 skipped');
    expect(done).toContain('aria-valuenow="200"');

    const failed = renderToStaticMarkup(
      createElement(OperationProgress, {
        operation: {
          ...base,
          state: 'failed',
          error: 'The API stopped.',
          finishedAt: '2026-11-27T10:01:00Z',
        },
      }),
    );
    expect(failed).toContain('data-testid="operation-error"');
    expect(text(failed)).toContain('It stopped: The API stopped.');
    expect(text(failed)).toContain('Failed after 50 of 200 webhooks');
  });
});
