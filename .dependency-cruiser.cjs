// The import graph's rules (`pnpm lint:imports`, part of `pnpm test`): no circles, and every arrow
// points down the layers a request or a message travels through (README of each package).
const notTest = '\\.test\\.ts$';
const relayTop = '^relay-node/src/(index|node|start-inbound|start-submission|start-outbound|server|heartbeat|enroll)\\.ts$';
const layer = (name, comment, from, to, extra = {}) => ({ name, comment, severity: 'error', from: { path: from, pathNot: notTest, ...extra.from }, to: { path: to, ...extra.to } });

module.exports = {
  forbidden: [
    { name: 'no-circular', comment: 'A circle makes a module load before what it needs; pull the shared part down a layer.', severity: 'error', from: {}, to: { circular: true } },

    // shared/ is below everything.
    layer('shared-stands-alone', 'shared/ is used by edge/ and relay-node/, never the reverse.', '^shared/', '^(edge|relay-node|schema|test|bench)/'),

    // edge/: index/app → routes → http, middleware → durable-objects → services → contracts, db, net, crypto.
    layer('edge-lower-layers-not-up', 'contracts/, db/, net/ and crypto/ serve services; they never reach back up.', '^edge/src/(contracts|db|net|crypto)/', '^edge/src/(services|routes|http|middleware|durable-objects|app\\.ts|index\\.ts|openapi\\.ts)'),
    layer('edge-services-not-up', 'Services throw domain errors (services/errors.ts) that the HTTP layer maps; they never import it.', '^edge/src/services/', '^edge/src/(routes|http|middleware|durable-objects|app\\.ts|index\\.ts|openapi\\.ts)'),
    layer('edge-durable-objects-not-up', 'Durable Objects run services; routes and the HTTP layer are above them.', '^edge/src/durable-objects/', '^edge/src/(routes|http|middleware|app\\.ts|index\\.ts|openapi\\.ts)'),
    layer('edge-http-not-up', 'The HTTP layer serves routes; routes declare themselves with it.', '^edge/src/(http|middleware)/', '^edge/src/(routes|app\\.ts|index\\.ts|openapi\\.ts)'),
    // The outbound path is services/delivery/ (claim, jobs, results, the suppression, bounce ingestion beneath it); it
    // builds on the API's records (emails/, bounces/), which never reach into it or into each other; its relay routes call only it.
    layer('edge-records-not-delivery', 'emails/ and bounces/ are the API\'s records; the delivery pipeline builds on them, never the reverse.', '^edge/src/services/(emails|bounces)/', '^edge/src/services/delivery/'),
    layer('edge-emails-not-bounces', 'The API\'s email records and bounce reads stand apart; what both need lies below them or in delivery/.', '^edge/src/services/emails/', '^edge/src/services/bounces/'),
    layer('edge-bounces-not-emails', 'The API\'s email records and bounce reads stand apart; what both need lies below them or in delivery/.', '^edge/src/services/bounces/', '^edge/src/services/emails/'),
    layer('edge-relay-outbound-through-delivery', 'The relay\'s outbound routes make one call each into services/delivery/, nothing else of services/.', '^edge/src/routes/relay/outbound/', '^edge/src/services/', { to: { pathNot: '^edge/src/services/delivery/' } }),
    layer('edge-runtime-stays-in-src', 'The Worker never imports the local stack, the CLI or relay-node code (they run in Node).', '^edge/src/', '^(edge/(local|cli)|relay-node)/'),
    layer('edge-local-not-cli', 'The CLI drives the local stack, not the reverse.', '^edge/local/', '^edge/cli/'),

    // The node and the edge share only shared/ (the /relay/v1 contract is shared/src/relay-protocol); the edge's
    // local stack and CLI may run a node, never the reverse.
    layer('relay-node-not-edge', 'A relay node talks to the edge over /relay/v1 only; what both sides need lives in shared/.', '^relay-node/', '^edge/'),

    // relay-node/: index, node, start-<direction>, server, heartbeat, enroll → submission/, inbound/, outbound/ → smtp/, tls/ → edge/ → spool/, proxy/, state/, log.ts.
    layer('relay-foundations-not-up', 'spool/, proxy/, state/ and log.ts serve every part; they never reach into one.', '^relay-node/src/(spool|proxy|state)/|^relay-node/src/(log|version)\\.ts$', `^relay-node/src/(inbound|outbound|submission|smtp|edge|tls)/|${relayTop}`),
    layer('relay-edge-not-up', 'edge/ (the one client and its retry loop) serves every part that talks to the edge.', '^relay-node/src/edge/', `^relay-node/src/(inbound|outbound|submission|tls)/|${relayTop}`),
    layer('relay-tls-not-up', 'tls/ hands listeners their certificates; it knows no listener.', '^relay-node/src/tls/', `^relay-node/src/(inbound|outbound|submission)/|${relayTop}`),
    layer('relay-inbound-not-outbound', 'The two directions share only what lies below them.', '^relay-node/src/inbound/', `^relay-node/src/(outbound|submission)/|${relayTop}`),
    layer('relay-outbound-not-inbound', 'The two directions share only what lies below them.', '^relay-node/src/outbound/', `^relay-node/src/(inbound|submission)/|${relayTop}`),
    layer('relay-submission-not-outbound', 'Submission hands mail to the edge; delivery is outbound\'s.', '^relay-node/src/submission/', `^relay-node/src/outbound/|${relayTop}`),
    // smtp/ is the session machinery both listeners build on (caps, command counting, replies, MAIL FROM, the data guard).
    layer('relay-submission-not-inbound', 'Submission and inbound share the SMTP session layer (smtp/), never each other\'s files.', '^relay-node/src/submission/', '^relay-node/src/inbound/'),
    layer('relay-smtp-not-up', 'smtp/ serves both listeners; it knows neither, nor what lies above them.', '^relay-node/src/smtp/', `^relay-node/src/(inbound|outbound|submission|edge|tls|metrics)/|${relayTop}`),

    // clients/: the generated clients are packages of their own, installed by people who have none of this repository's code;
    // the generator reads the OpenAPI document through the CLI (a child process), never the Worker's modules.
    layer('clients-stand-alone', 'A client library imports only itself; the generator reads the API through export-api-spec.', '^clients/', '^(edge|relay-node|shared|schema|test|bench)/'),

    layer('no-test-support-in-production', 'Only tests import test support.', '^(edge/src|edge/local|edge/cli|relay-node/src|shared/src)/', '(^|/)test-support/|^test/', { from: { pathNot: `${notTest}|test-support/` } }),
  ],
  options: {
    includeOnly: '^(edge|relay-node|shared|schema|clients)/',
    exclude: { path: 'node_modules' },
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.base.json' },
    // The workspace packages (@edgemail/shared, @edgemail/schema) name their entry in package.json `exports`, which
    // dependency-cruiser ignores by default: without this every import of them is unresolved and left out of the graph.
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'types', 'default'] },
  },
};
