import { conflict, invalid } from '../errors.js';

/** Content of a version that is or was active never changes, so activating it again rolls back exactly. */
export const versionFrozen = (version: number) =>
  conflict(`version ${version} was activated and cannot be changed; create a new version`);

export const stylesheetRefused = () =>
  invalid('invalid request body: stylesheet_id: no such stylesheet in this project', { stylesheet_id: 'no such stylesheet in this project' });
