export * from './accounts';
export * from './auth';
export * from './enums';
export * from './pagination';
export * from './permissions';
export * from './problem';
export * from './retry-schedule';
