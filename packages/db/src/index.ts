export * from './buckets';
export * from './delivery-body';
export * from './errors';
export * from './knex';
export * from './migrate';
export * from './models/index';
export * from './notify';
export * from './queue/index';
