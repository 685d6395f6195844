export * from './common';
export * from './conferences';
export * from './documents';
export * from './parties';
export * from './processes';
export * from './property';
export * from './real-estate';
