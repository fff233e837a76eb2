// The node's Prometheus metrics (docs/operations.md lists them): one registry
// per node, so two nodes in one process (tests) never share a counter. Label
// values are fixed words chosen here (listener names, reply classes, outcomes,
// certificate sources): never an address, a domain or anything else a sender
// or a tenant wrote, so a scrape carries no tenant data.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Seconds: SMTP replies and edge round trips are milliseconds to tens of seconds. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** What the collectors read at scrape time (the live state of the node). */
export interface MetricsSources {
  /** Open SMTP sessions per listener name. */
  openSessions(): Record<string, number>;
  spool(): Promise<{ depth: number; bytes: number }>;
  deadLetters(): { count: number; bytes: number };
  /** Seconds since the edge last answered, null before it ever did. */
  edgeLastAnswerAgeSeconds(): number | null;
  /** Whether the edge counts as reached now (answered within `relay_node.metrics.ready_window`). */
  edgeReachable(): boolean;
  /** Open outbound SMTP sessions of each destination the node holds sessions to (no names). */
  destinationConnections(): number[];
  /** Each TLS listener's served certificate: its source and end (ms since the epoch), null when unknown. */
  servedCertificates(): { listener: string; source: string; notAfterMs: number | null }[];
}

export type NodeMetrics = ReturnType<typeof createNodeMetrics>;

/**
 * @example
 * const metrics = createNodeMetrics(sources);
 * metrics.messages.inc({ listener: 'inbound', result: 'accepted', class: '2xx' });
 * const text = await metrics.registry.metrics(); // Prometheus text format
 */
export function createNodeMetrics(sources: MetricsSources) {
  const registry = new Registry();
  const registers = [registry];
  // Both spool figures come from one look at the folder: the scrape collects every metric at once, so the
  // second asks while the first's look is under way and shares it.
  let spoolLook: Promise<{ depth: number; bytes: number }> | null = null;
  const spoolFigures = () => (spoolLook ??= sources.spool().finally(() => { spoolLook = null; }));
  // process_cpu_seconds_total, process_resident_memory_bytes, heap, event loop lag, open fds…
  collectDefaultMetrics({ register: registry, prefix: 'edgemail_relay_' });

  const metrics = {
    registry,
    sessionsOpen: new Gauge({
      name: 'edgemail_relay_smtp_sessions_open', help: 'SMTP sessions open now, per listener.', labelNames: ['listener'] as const, registers,
      collect() {
        this.reset();
        for (const [listener, open] of Object.entries(sources.openSessions())) this.set({ listener }, open);
      },
    }),
    sessions: new Counter({ name: 'edgemail_relay_smtp_sessions_total', help: 'SMTP sessions accepted (given a greeting), per listener.', labelNames: ['listener'] as const, registers }),
    sessionsRefused: new Counter({
      name: 'edgemail_relay_smtp_sessions_refused_total',
      help: 'SMTP sessions refused at connect, per listener and reason (max_sessions, max_sessions_per_ip, rate: the per-minute rate or a shut-out address).',
      labelNames: ['listener', 'reason'] as const, registers,
    }),
    messages: new Counter({
      name: 'edgemail_relay_smtp_messages_total', help: 'Messages answered at the end of DATA, per listener, result (accepted, refused) and reply class (2xx, 4xx, 5xx).',
      labelNames: ['listener', 'result', 'class'] as const, registers,
    }),
    recipients: new Counter({
      name: 'edgemail_relay_smtp_recipients_total', help: 'RCPT TO answers per listener and reply class.', labelNames: ['listener', 'class'] as const, registers,
    }),
    tlsHandshakes: new Counter({
      name: 'edgemail_relay_tls_handshakes_total', help: 'TLS handshakes completed (STARTTLS and implicit TLS), per listener and the source of the certificate presented.',
      labelNames: ['listener', 'certificate'] as const, registers,
    }),
    certificateExpiry: new Gauge({
      name: 'edgemail_relay_tls_certificate_expiry_seconds', help: 'Seconds until the certificate a listener presents (to clients without SNI) expires; negative once expired.',
      labelNames: ['listener', 'certificate'] as const, registers,
      collect() {
        this.reset();
        for (const served of sources.servedCertificates()) {
          if (served.notAfterMs !== null) this.set({ listener: served.listener, certificate: served.source }, (served.notAfterMs - Date.now()) / 1000);
        }
      },
    }),
    spoolMessages: new Gauge({
      name: 'edgemail_relay_spool_messages', help: 'Inbound messages spooled and not yet acknowledged by the edge.', registers,
      async collect() { this.set((await spoolFigures()).depth); },
    }),
    spoolBytes: new Gauge({
      name: 'edgemail_relay_spool_bytes', help: 'Bytes of the spooled inbound messages.', registers,
      async collect() { this.set((await spoolFigures()).bytes); },
    }),
    deadLetters: new Gauge({
      name: 'edgemail_relay_dead_letters', help: 'Messages in the spool\'s dead/ folder (refused by the edge for good).', registers,
      collect() { this.set(sources.deadLetters().count); },
    }),
    deadLetterBytes: new Gauge({
      name: 'edgemail_relay_dead_letter_bytes', help: 'Bytes of the messages in dead/ (counted against relay_node.spool.max_dead_letter_bytes).', registers,
      collect() { this.set(sources.deadLetters().bytes); },
    }),
    forwardSeconds: new Histogram({
      name: 'edgemail_relay_forward_seconds', help: 'Time of one forwarding request to the edge (one message or a batch), per outcome (ok, error).',
      labelNames: ['outcome'] as const, buckets: LATENCY_BUCKETS, registers,
    }),
    forwardedMessages: new Counter({ name: 'edgemail_relay_forwarded_messages_total', help: 'Inbound messages carried by forwarding requests the edge answered (each acknowledged, or refused for good and moved to dead/).', registers }),
    // docs/inbound.md, "Spam scoring": rspamd asked per message when `relay_node.inbound.spam.rspamd_url` is set.
    spamChecks: new Counter({ name: 'edgemail_relay_spam_checks_total', help: 'Inbound messages rspamd scored.', registers }),
    spamCheckFailures: new Counter({
      name: 'edgemail_relay_spam_check_failures_total', help: 'Inbound messages stored unscored because rspamd gave no verdict, per reason (timeout, unreachable, error).',
      labelNames: ['reason'] as const, registers,
    }),
    forwardRetries: new Counter({ name: 'edgemail_relay_forward_retries_total', help: 'Forwarding requests that failed and will be tried again (edge unreachable, busy or erring).', registers }),
    edgeRequests: new Counter({
      name: 'edgemail_relay_edge_requests_total', help: 'Requests to the edge per outcome: answered (any status below 500), error (5xx), unreachable (no answer).',
      labelNames: ['outcome'] as const, registers,
    }),
    edgeUp: new Gauge({
      name: 'edgemail_relay_edge_up', help: '1 while the edge answered within relay_node.metrics.ready_window, else 0.', registers,
      collect() { this.set(sources.edgeReachable() ? 1 : 0); },
    }),
    edgeLastAnswer: new Gauge({
      name: 'edgemail_relay_edge_last_answer_age_seconds', help: 'Seconds since the edge last answered (absent before it ever did).', registers,
      collect() {
        this.reset();
        const age = sources.edgeLastAnswerAgeSeconds();
        if (age !== null) this.set(age);
      },
    }),
    outboundJobs: new Counter({
      name: 'edgemail_relay_outbound_jobs_total', help: 'Outbound recipients claimed from the edge, and results reported per outcome (sent, deferred, failed).',
      labelNames: ['event'] as const, registers,
    }),
    deliverySeconds: new Histogram({
      name: 'edgemail_relay_outbound_delivery_seconds', help: 'Time of one delivery attempt (route, connect, SMTP transaction), per outcome.',
      labelNames: ['outcome'] as const, buckets: LATENCY_BUCKETS, registers,
    }),
    destinations: new Gauge({
      name: 'edgemail_relay_outbound_destinations', help: 'Destinations the node holds reusable SMTP sessions to, by how many sessions are open to each (connections: 0 to 5; 5 means 5 or more).',
      labelNames: ['connections'] as const, registers,
      collect() {
        this.reset();
        const counts = [0, 0, 0, 0, 0, 0];
        for (const open of sources.destinationConnections()) counts[Math.min(open, 5)]!++;
        counts.forEach((n, connections) => this.set({ connections: String(connections) }, n));
      },
    }),
    outboundConnections: new Gauge({
      name: 'edgemail_relay_outbound_connections', help: 'Outbound SMTP sessions open now, all destinations together.', registers,
      collect() { this.set(sources.destinationConnections().reduce((a, b) => a + b, 0)); },
    }),
  };
  return metrics;
}

/** `2xx`, `4xx` or `5xx` from an SMTP reply code. */
export function replyClass(code: number): string {
  return `${Math.floor(code / 100)}xx`;
}
