export * from './pattern.js';
export * from './rule.js';
export * from './header-block.js';
