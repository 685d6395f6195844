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
    expect(matchRoute('/webhook-groups')).toEqual({ name: 'webhook-groups' });
    expect(matchRoute('/webhook-issues')).toEqual({ name: 'webhook-issues' });
    expect(matchRoute('/operator-actions/')).toEqual({ name: 'operator-actions' });
    expect(matchRoute('/webhook-operations/7')).toEqual({ name: 'webhook-operation', id: 7 });
    expect(matchRoute('/webhook-event-types')).toEqual({ name: 'event-catalog' });
    expect(sectionOf({ name: 'event-catalog' })).toBe('event-catalog');
    expect(titleOf({ name: 'event-catalog' })).toBe('Event catalog');
  });

  it('sends the addresses the console had before to the screens of the API’s names', () => {
    expect(matchRoute('/blocked-groups')).toEqual({ name: 'moved', to: '/webhook-groups' });
    expect(matchRoute('/triage/')).toEqual({ name: 'moved', to: '/webhook-issues' });
    expect(matchRoute('/audit')).toEqual({ name: 'moved', to: '/operator-actions' });
    expect(matchRoute('/operations/7')).toEqual({ name: 'moved', to: '/webhook-operations/7' });
    // an old address of no screen is still no screen
    expect(matchRoute('/operations/x')).toEqual({ name: 'not-found' });
    expect(matchRoute('/triage/1')).toEqual({ name: 'not-found' });
  });

  it('answers not-found for anything else', () => {
    for (const path of [
      '/webhooks/0',
      '/webhooks/abc',
      '/webhooks/1/2',
      '/registrations/3000000000',
      '/webhook-operations',
      '/webhook-operations/x',
      '/webhook-operations/3000000000',
      '/webhook-issues/1',
      '/nope',
    ]) {
      expect(matchRoute(path).name, path).toBe('not-found');
    }
  });

  it('names sections and titles', () => {
    expect(sectionOf({ name: 'webhook', id: 1 })).toBe('webhooks');
    expect(sectionOf({ name: 'registration-new' })).toBe('registrations');
    expect(titleOf({ name: 'webhook', id: 5 })).toBe('Webhook 5');
    expect(sectionOf({ name: 'webhook-operation', id: 3 })).toBe('operator-actions');
    expect(titleOf({ name: 'webhook-operation', id: 3 })).toBe('Webhook operation 3');
    expect(titleOf({ name: 'webhook-issues' })).toBe('Webhook issues (triage)');
  });
});
