import { WebhookState } from '@platform/shared';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../lib/api-client';
import { actOnSelected } from './act-in-sequence';

const { Created, Failed, Successful, Aborted } = WebhookState;
const conflict = () =>
  new ApiError(409, { type: 'about:blank', title: 'Conflict', status: 409, detail: 'It is Successful now.' });

describe('acting on selected rows', () => {
  it('retries the Failed ones, skips the rest without a request, and counts refusals', async () => {
    const sent: number[] = [];
    const seen: number[] = [];
    const result = await actOnSelected(
      [
        { id: 1, state: Failed },
        { id: 2, state: Created },
        { id: 3, state: Failed },
        { id: 4, state: Failed },
      ],
      'retry',
      async (id) => {
        sent.push(id);
        if (id === 3) throw conflict();
      },
      (figures) => seen.push(figures.done),
    );
    expect(sent).toEqual([1, 3, 4]);
    expect(result).toMatchObject({
      state: 'done',
      total: 4,
      done: 4,
      changed: 2,
      skipped: { 'not-failed': 1, refused: 1 },
      error: null,
    });
    expect(seen).toEqual([0, 1, 2, 3, 4, 4]);
  });

  it('skips final webhooks for abort and resolve', async () => {
    const result = await actOnSelected(
      [
        { id: 1, state: Successful },
        { id: 2, state: Aborted },
        { id: 3, state: Created },
      ],
      'abort',
      async () => {},
    );
    expect(result).toMatchObject({ changed: 1, skipped: { final: 2 } });
  });

  it('stops at a refusal other than 409 and says where', async () => {
    const result = await actOnSelected(
      [
        { id: 1, state: Failed },
        { id: 2, state: Failed },
        { id: 3, state: Failed },
      ],
      'resolve',
      async (id) => {
        if (id === 2)
          throw new ApiError(403, {
            type: 'about:blank',
            title: 'Forbidden',
            status: 403,
            detail: 'Not allowed.',
          });
      },
    );
    expect(result).toMatchObject({ state: 'failed', done: 1, changed: 1, error: 'Webhook 2: Not allowed.' });
  });
});
