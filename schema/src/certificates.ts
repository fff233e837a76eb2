// TLS certificates, shared by every relay node. Private halves are sealed with
// AES-GCM under `database.crypto.encryption_key`; certificates are public.
import { sql } from 'drizzle-orm';
import { bigint, check, integer, pgEnum, pgTable, smallint, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { relayNodes } from './relay.js';

// `self_signed`: the pair generated on first use (listener resolution step 3).
// `authority`: a certificate authority (generated or uploaded) that can issue.
// `issued`: a leaf signed by one of our authorities. `uploaded`: a leaf brought
// by the operator. `acme`: obtained over ACME by a relay node (step 2).
export const certificateKind = pgEnum('certificate_kind', ['self_signed', 'uploaded', 'authority', 'issued', 'acme']);

export const certificates = pgTable('certificates', {
  id: uuid('id').primaryKey().defaultRandom(),
  name: text('name').notNull(),
  kind: certificateKind('kind').notNull(),
  // The certificate alone (one PEM block): for `issued` never bundled with the root.
  certificatePem: text('certificate_pem').notNull(),
  // Intermediates served after it (uploaded and ACME chains); empty otherwise.
  chainPem: text('chain_pem').notNull().default(''),
  // `v1.<base64 iv>.<base64 ciphertext+tag>`, see edge/src/crypto/seal.ts.
  privateKeySealed: text('private_key_sealed').notNull(),
  // The authority that signed an `issued` certificate; kept (null) when it is deleted.
  issuerId: uuid('issuer_id').references((): any => certificates.id, { onDelete: 'set null' }),
  // Read from the certificate when it is stored, for listing without parsing.
  subject: text('subject').notNull().default(''),
  issuerSubject: text('issuer_subject').notNull().default(''),
  hosts: text('hosts').array().notNull().default(sql`'{}'::text[]`),
  // `rsa`, `ecdsa` or `ed25519`; key_size in bits (the curve's for ECDSA).
  algorithm: text('algorithm').notNull().default(''),
  keySize: integer('key_size'),
  serialNumber: text('serial_number').notNull().default(''),
  fingerprintSha256: text('fingerprint_sha256').notNull().default(''),
  notBefore: timestamp('not_before', { withTimezone: true }),
  notAfter: timestamp('not_after', { withTimezone: true }).notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
}, (t) => [
  uniqueIndex('certificates_name_idx').on(t.name),
  // One self-signed pair per installation: the first node to ask creates it.
  uniqueIndex('certificates_one_self_signed_idx').on(t.kind).where(sql`${t.kind} = 'self_signed'`),
]);

/** The SMTP listeners a certificate can be assigned to (the names relay nodes report). */
export const TLS_LISTENERS = ['inbound', 'submission'] as const;
export type TlsListener = (typeof TLS_LISTENERS)[number];

// Step (1) of listener resolution. Deleting the certificate clears the
// assignment (the edge refuses that while the listener has TLS on).
export const listenerCertificates = pgTable('listener_certificates', {
  listener: text('listener').primaryKey(),
  certificateId: uuid('certificate_id').notNull().references(() => certificates.id, { onDelete: 'cascade' }),
  assignedAt: timestamp('assigned_at', { withTimezone: true }).notNull().defaultNow(),
}, (t) => [
  check('listener_certificates_listener_check', sql`${t.listener} in ('inbound', 'submission')`),
]);

// One row: bumped by statement triggers on certificates and listener_certificates
// (migration 0012), so a node polling with the generation it
// holds is answered "unchanged" from this row alone. Direct SQL (the offline
// `tls` commands, an operator's fix) bumps it too.
export const tlsState = pgTable('tls_state', {
  id: smallint('id').primaryKey().default(1),
  generation: bigint('generation', { mode: 'number' }).notNull().default(0),
  changedAt: timestamp('changed_at', { withTimezone: true }).notNull().defaultNow(),
}, (t) => [
  check('tls_state_one_row', sql`${t.id} = 1`),
]);

// ACME http-01 answers, published by the node that orders so that whichever
// node the CA reaches can answer. Short-lived.
export const acmeChallenges = pgTable('acme_challenges', {
  token: text('token').primaryKey(),
  keyAuthorization: text('key_authorization').notNull(),
  host: text('host').notNull(),
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
});

// Which node is ordering a host's certificate: one at a time, until expires_at.
export const acmeLeases = pgTable('acme_leases', {
  host: text('host').primaryKey(),
  nodeId: uuid('node_id').notNull().references(() => relayNodes.id, { onDelete: 'cascade' }),
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  lastError: text('last_error'),
});
