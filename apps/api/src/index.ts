export { createApp } from './app';
export { loadConfig, testConfig, type Config } from './config';
export type { AppDeps } from './deps';
export { hashPassword } from './auth/passwords';
export { TokenService } from './auth/tokens';
