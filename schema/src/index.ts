export * from './tenancy.js';
export * from './credentials.js';
export * from './audit.js';
