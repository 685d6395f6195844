import { describe, expect, it } from 'vitest';
import { matchRoute, sectionOf, titleOf } from './route-table';

describe('route table', () => {
  it('matches every screen', () => {
    expect(matchRoute('/')).toEqual({ name: 'overview' });
    expect(matchRoute('/webhooks')).toEqual({ name: 'webhooks' });
    expect(matchRoute('/webhooks/')).toEqual({ name: 'webhooks' });
    expect(matchRoute('/webhooks/9007199254740991')).toEqual({ name: 'webhook', id: 9007199254740991 });
    expect(matchRoute('/registrations')).toEqual({ name: 'registrations' });
    expect(matchRoute('/registrations/new')).toEqual({ name: 'registration-new' });
    expect(matchRoute('/registrations/12')).toEqual({ name: 'registration', id: 12 });
    expect(matchRoute('/blocked-groups')).toEqual({ name: 'blocked-groups' });
    expect(matchRoute('/triage')).toEqual({ name: 'triage' });
    expect(matchRoute('/audit/')).toEqual({ name: 'audit' });
    expect(matchRoute('/operations/7')).toEqual({ name: 'operation', id: 7 });
  });

  it('answers not-found for anything else', () => {
    for (const path of [
      '/webhooks/0',
      '/webhooks/abc',
      '/webhooks/1/2',
      '/registrations/3000000000',
      '/operations',
      '/operations/x',
      '/operations/3000000000',
      '/triage/1',
      '/nope',
    ]) {
      expect(matchRoute(path).name, path).toBe('not-found');
    }
  });

  it('names sections and titles', () => {
    expect(sectionOf({ name: 'webhook', id: 1 })).toBe('webhooks');
    expect(sectionOf({ name: 'registration-new' })).toBe('registrations');
    expect(titleOf({ name: 'webhook', id: 5 })).toBe('Webhook 5');
    expect(sectionOf({ name: 'operation', id: 3 })).toBe('audit');
    expect(titleOf({ name: 'operation', id: 3 })).toBe('Operation 3');
  });
});
