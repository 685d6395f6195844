import { describe, expect, it } from 'vitest';
import { toastsForPath } from './toast';

describe('toasts across screens', () => {
  it('drops the errors of another screen and keeps successes and the errors of this one', () => {
    const toasts = [
      { id: 1, tone: 'error' as const, path: '/admin/webhooks/5' },
      { id: 2, tone: 'success' as const, path: '/admin/webhooks/5' },
      { id: 3, tone: 'error' as const, path: '/admin/blocked-groups' },
    ];
    expect(toastsForPath(toasts, '/admin/blocked-groups').map((t) => t.id)).toEqual([2, 3]);
    expect(toastsForPath(toasts, '/admin/webhooks/5').map((t) => t.id)).toEqual([1, 2]);
  });
});
