ALTER TYPE "public"."certificate_kind" ADD VALUE 'acme';--> statement-breakpoint
CREATE TABLE "acme_challenges" (
	"token" text PRIMARY KEY NOT NULL,
	"key_authorization" text NOT NULL,
	"host" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "acme_leases" (
	"host" text PRIMARY KEY NOT NULL,
	"node_id" uuid NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"last_error" text
);
--> statement-breakpoint
CREATE TABLE "listener_certificates" (
	"listener" text PRIMARY KEY NOT NULL,
	"certificate_id" uuid NOT NULL,
	"assigned_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "listener_certificates_listener_check" CHECK ("listener_certificates"."listener" in ('inbound', 'submission'))
);
--> statement-breakpoint
CREATE TABLE "tls_state" (
	"id" smallint PRIMARY KEY DEFAULT 1 NOT NULL,
	"generation" bigint DEFAULT 0 NOT NULL,
	"changed_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "tls_state_one_row" CHECK ("tls_state"."id" = 1)
);
--> statement-breakpoint
ALTER TABLE "certificates" ADD COLUMN "chain_pem" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "certificates" ADD COLUMN "issuer_id" uuid;--> statement-breakpoint
ALTER TABLE "certificates" ADD COLUMN "subject" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "certificates" ADD COLUMN "issuer_subject" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "certificates" ADD COLUMN "hosts" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "certificates" ADD COLUMN "algorithm" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "certificates" ADD COLUMN "key_size" integer;--> statement-breakpoint
ALTER TABLE "certificates" ADD COLUMN "serial_number" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "certificates" ADD COLUMN "fingerprint_sha256" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "certificates" ADD COLUMN "not_before" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "certificates" ADD COLUMN "updated_at" timestamp with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
ALTER TABLE "acme_leases" ADD CONSTRAINT "acme_leases_node_id_relay_nodes_id_fk" FOREIGN KEY ("node_id") REFERENCES "public"."relay_nodes"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "listener_certificates" ADD CONSTRAINT "listener_certificates_certificate_id_certificates_id_fk" FOREIGN KEY ("certificate_id") REFERENCES "public"."certificates"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "certificates" ADD CONSTRAINT "certificates_issuer_id_certificates_id_fk" FOREIGN KEY ("issuer_id") REFERENCES "public"."certificates"("id") ON DELETE set null ON UPDATE no action;