import { describe, expect, it } from 'vitest';
import {
  changedText,
  dryRunCountText,
  operationSummary,
  progressPercent,
  skippedEntries,
  skippedText,
} from './operation-progress';
import { anOperation } from '../../../../tests/support/operations';

const operation = anOperation;

describe('operation progress', () => {
  it('measures done of total, whole percent, and a finished empty selection as complete', () => {
    expect(progressPercent(operation())).toBe(50);
    expect(progressPercent(operation({ done: 119 }))).toBe(99);
    expect(progressPercent(operation({ total: 0, done: 0 }))).toBe(0);
    expect(progressPercent(operation({ total: 0, done: 0, state: 'done' }))).toBe(100);
  });

  it('lists skip reasons with a count, largest first, in words', () => {
    const skipped = { final: 2, 'not-failed': 10, 'registration-deleted': 0, 'some-new-reason': 1 };
    expect(skippedEntries(skipped)).toEqual([
      ['not-failed', 10],
      ['final', 2],
      ['some-new-reason', 1],
    ]);
    expect(skippedText({ final: 1200 })).toBe('1,200 already final (Successful, Aborted or Resolved)');
  });

  it('says what changed, or would, and counts written webhooks for a replay', () => {
    expect(changedText(operation())).toBe('50 retried');
    expect(changedText(operation({ dryRun: true }))).toBe('50 would be retried');
    expect(changedText(operation({ action: 'replay', changed: 1 }))).toBe('1 webhook written');
  });

  it('sums up a dry run, a finished, a running and a failed operation', () => {
    expect(operationSummary(operation({ dryRun: true, state: 'done', done: 120, changed: 110 }))).toBe(
      '120 webhooks selected: 110 would be retried, 10 skipped (10 not Failed (nothing to retry)).',
    );
    expect(operationSummary(operation({ state: 'done', done: 120, changed: 110, action: 'abort' }))).toBe(
      'Done: 120 webhooks selected, 110 aborted, 10 skipped (10 not Failed (nothing to retry)).',
    );
    expect(operationSummary(operation({ skipped: {} }))).toBe(
      'Running: 60 of 120 webhooks processed, 50 retried.',
    );
    expect(operationSummary(operation({ state: 'failed', skipped: {}, error: 'The API restarted.' }))).toBe(
      'Failed after 60 of 120 webhooks: 50 retried. The API restarted.',
    );
  });

  it('tells what a bulk dry run counted, with the skip reasons only when some were skipped', () => {
    const counted = operation({ dryRun: true, state: 'done', done: 1200, total: 1200, changed: 1190 });
    expect(dryRunCountText(counted)).toBe(
      '1,200 selected, 1,190 would change, 10 skipped (10 not Failed (nothing to retry)).',
    );
    expect(dryRunCountText({ total: 3, changed: 3, skipped: {} })).toBe(
      '3 selected, 3 would change, 0 skipped.',
    );
  });
});
