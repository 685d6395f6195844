import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { Pagination } from './pagination';

/** The text a screen reader or a test would read, tags dropped. */
const text = (html: string) => html.replace(/<[^>]+>/g, '').replace(/\s+/g, ' ');

const status = (page: Parameters<typeof Pagination>[0]['page']) =>
  text(renderToStaticMarkup(createElement(Pagination, { page, noun: 'webhooks', onPageChange: () => {} })));

describe('Pagination', () => {
  const page = { pageNumber: 1, totalPages: 500, hasPreviousPage: false, hasNextPage: true };

  it('says "at least" of a capped count (a search past 10,000 matches), the exact count otherwise', () => {
    expect(status({ ...page, totalCount: 10_000, totalCountCapped: true })).toContain(
      'Page 1 of 500 · 10,000+ webhooks',
    );
    expect(status({ ...page, totalCount: 10_000, totalCountCapped: false })).toContain(
      'Page 1 of 500 · 10,000 webhooks',
    );
    expect(status({ ...page, totalCount: 10_000 })).toContain('Page 1 of 500 · 10,000 webhooks');
  });
});
