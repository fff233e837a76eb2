ALTER TABLE "inbound_emails" ADD COLUMN "stripped_text" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "inbound_emails" ADD COLUMN "stripped_signature" text;