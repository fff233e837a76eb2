export * from './pattern.js';
export * from './rule.js';
