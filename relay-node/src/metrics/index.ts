// Prometheus metrics and health of a relay node (docs/operations.md).
export { createTelemetry, type Telemetry } from './telemetry.js';
export { countOutbound, countSlotRefusals, instrumentSmtpServer, spoolFigures, timeForwarding } from './instrument.js';
export { hostAllowed, startMetricsServer, type MetricsServer, type Readiness } from './http.js';
export { createNodeMetrics, type NodeMetrics } from './node-metrics.js';
