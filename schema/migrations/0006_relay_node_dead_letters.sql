ALTER TABLE "relay_nodes" ADD COLUMN "dead_letters" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "relay_nodes" ADD COLUMN "dead_letter_bytes" bigint DEFAULT 0 NOT NULL;