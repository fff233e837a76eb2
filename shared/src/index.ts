export * from './config/define.js';
export * from './config/settings.js';
export * from './config/load.js';
export * from './config/docs.js';
export * from './auth/permissions.js';
export * from './auth/tokens.js';
export * from './ip.js';
export * from './client-address.js';
