import { describe, expect, it } from 'vitest';
import { stripBase, withBase } from './router';

describe('router paths', () => {
  it('maps browser paths under the base to console paths', () => {
    expect(stripBase('/admin', '/admin/')).toBe('/');
    expect(stripBase('/admin/', '/admin/')).toBe('/');
    expect(stripBase('/admin/webhooks/5', '/admin/')).toBe('/webhooks/5');
    expect(stripBase('/administrator', '/admin/')).toBe('/administrator');
    expect(stripBase('/webhooks', '/')).toBe('/webhooks');
  });

  it('maps console paths to browser URLs under the base', () => {
    expect(withBase('/webhooks?page=2', '/admin/')).toBe('/admin/webhooks?page=2');
    expect(withBase('/', '/admin/')).toBe('/admin/');
    expect(withBase('registrations', '/admin')).toBe('/admin/registrations');
    expect(withBase('/x', '/')).toBe('/x');
  });
});
