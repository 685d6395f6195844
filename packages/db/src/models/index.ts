export * from './base-model';
export * from './identity';
export * from './webhooks';
