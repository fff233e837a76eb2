// The checks a write must pass before anything is stored: the issuer's policy
// and its discovery (the provider answers with its metadata and this exact
// issuer), and a default project that exists. Each refusal names its field.
import type { Db } from '../../db/client.js';
import { issuerProblem } from '../oidc/issuer.js';
import { discover, discoveryProblem } from '../oidc/discovery.js';
import { projectExists } from '../projects/exists.js';
import { invalid } from '../errors.js';

const refuse = (field: string, problem: string) => invalid(`invalid request body: ${field}: ${problem}`, { [field]: problem });

export async function checkIssuer(issuer: string): Promise<void> {
  const policy = issuerProblem(issuer);
  if (policy) throw refuse('issuer', policy);
  const discovery = await discoveryProblem(issuer);
  if (discovery) throw refuse('issuer', discovery);
  // oauth4webapi compares the two as parsed URLs (`https://idp` equals
  // `https://idp/`); the ID tokens' `iss` is compared as text, so the stored
  // issuer must be the provider's own spelling (OpenID Connect Discovery 1.0, 4.3: "identical").
  const named = (await discover(issuer)).issuer;
  if (named !== issuer) throw refuse('issuer', `discovery of ${issuer} names the issuer ${named}: write it exactly as the provider does`);
}

/** The refusal of a default project that does not exist (also when it is deleted while the write runs). */
export const noDefaultProject = (projectId: string) => refuse('default_project_id', `no project ${projectId}`);

export async function checkDefaultProject(db: Db, projectId: string | null): Promise<void> {
  if (projectId !== null && !(await projectExists(db, projectId))) throw noDefaultProject(projectId);
}
