// What the two test routes (a project's server, a pool server) say of the
// probe: one text, so the project and admin documents cannot drift apart.
import { SmtpProbeReportSchema } from '../../../contracts/smtp-server.js';

export const PROBE_DESCRIPTION = [
  'Connects to the server from the Worker and speaks SMTP with it, sending no mail: TCP connect (TLS from the first byte for `security: tls`), the 220 greeting, `EHLO`, then for `starttls` the `STARTTLS` command (it must be offered, else the test stops there and no password is sent in plain text), the TLS handshake (the certificate must be valid for `host`) and `EHLO` again; `AUTH PLAIN` (or `AUTH LOGIN` when only LOGIN is offered) when a username is set; `QUIT`.',
  'Each step is bounded by `timeout_ms` (5000 by default). The answer is 200 whether or not the server passed: `ok` is false when a step failed, and the last entry of `steps` is that step, with the server\'s reply when one came and `error` saying what was wrong. The password appears in no reply or error.',
  '**Port 25:** Cloudflare Workers may not open outbound connections to port 25, so in production a server on port 25 fails at `connect` here even though relay nodes (which deliver from their own hosts) may reach it. Test it on 587 or 465 if the server listens there too.',
].join('\n\n');

export const probeResponses = {
  200: { description: 'The report of every step taken (also when the server failed)', content: { 'application/json': { schema: SmtpProbeReportSchema } } },
} as const;
