// `acme.directory_ca_file`: CA certificates trusted for the ACME directory's
// HTTPS besides the system's (an internal ACME server; Pebble in tests).
// acme-client makes its requests through one axios instance; an interceptor
// gives requests to the directory's origin an agent that trusts the file, and
// leaves every other request (none, in practice) as it was.
import { readFile } from 'node:fs/promises';
import { Agent } from 'node:https';
import { rootCertificates } from 'node:tls';
import * as acme from 'acme-client';

const agents = new Map<string, Agent>();
let installed = false;

/** Trusts the PEM file's certificates for requests to `directoryUrl`'s origin (for the whole process). */
export async function trustDirectoryCa(directoryUrl: string, caFile: string): Promise<void> {
  const pem = await readFile(caFile, 'utf8').catch((err: Error) => {
    throw new Error(`acme.directory_ca_file: cannot read ${caFile}: ${err.message}`);
  });
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new Error(`acme.directory_ca_file: ${caFile} holds no PEM certificate`);
  agents.set(new URL(directoryUrl).origin, new Agent({ ca: [...rootCertificates, pem], keepAlive: true }));
  if (installed) return;
  installed = true;
  acme.axios.interceptors.request.use((config) => {
    const origin = config.url ? new URL(config.url).origin : undefined;
    const agent = origin && agents.get(origin);
    if (agent) config.httpsAgent = agent;
    return config;
  });
}
