export * from './common';
export * from './property';
