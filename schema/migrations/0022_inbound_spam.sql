ALTER TABLE "projects" ADD COLUMN "inbound_spam_reject_score" double precision;--> statement-breakpoint
ALTER TABLE "projects" ADD COLUMN "inbound_spam_mark_score" double precision;--> statement-breakpoint
ALTER TABLE "inbound_emails" ADD COLUMN "spam" jsonb;