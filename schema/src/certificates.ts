// TLS certificates, shared by every relay node. Private halves are sealed with
// AES-GCM under `database.crypto.encryption_key`; certificates are public.
import { sql } from 'drizzle-orm';
import { pgEnum, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

// `self_signed`: the pair generated on first use (listener resolution step 3).
// Uploaded, authority and issued kinds arrive with the certificates issue.
export const certificateKind = pgEnum('certificate_kind', ['self_signed', 'uploaded', 'authority', 'issued']);

export const certificates = pgTable('certificates', {
  id: uuid('id').primaryKey().defaultRandom(),
  name: text('name').notNull(),
  kind: certificateKind('kind').notNull(),
  certificatePem: text('certificate_pem').notNull(),
  // `v1.<base64 iv>.<base64 ciphertext+tag>`, see edge/src/crypto/seal.ts.
  privateKeySealed: text('private_key_sealed').notNull(),
  notAfter: timestamp('not_after', { withTimezone: true }).notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
}, (t) => [
  uniqueIndex('certificates_name_idx').on(t.name),
  // One self-signed pair per installation: the first node to ask creates it.
  uniqueIndex('certificates_one_self_signed_idx').on(t.kind).where(sql`${t.kind} = 'self_signed'`),
]);
