export * from './databases';
export * from './dispatcher';
export * from './ports';
export * from './processes';
export * from './seed';
export * from './target';
export * from './wait';
export * from './webhooks';
