/** This client's version: the package.json's, named in the User-Agent. */
export const VERSION = '0.1.0';
