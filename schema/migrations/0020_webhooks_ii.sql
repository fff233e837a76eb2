ALTER TABLE "webhook_deliveries" ADD COLUMN "ordering_key" text;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD COLUMN "event_seq" bigint;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD COLUMN "replay_id" uuid;--> statement-breakpoint
ALTER TABLE "webhooks" ADD COLUMN "ordered" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "webhooks" ADD COLUMN "disabled_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "webhooks" ADD COLUMN "disabled_reason" text;--> statement-breakpoint
ALTER TABLE "webhooks" ADD COLUMN "failing_since" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "webhooks" ADD COLUMN "consecutive_failures" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX "webhook_deliveries_ordering_idx" ON "webhook_deliveries" USING btree ("webhook_id","ordering_key","event_seq") WHERE "webhook_deliveries"."status" = 'pending' and "webhook_deliveries"."ordering_key" is not null;--> statement-breakpoint
CREATE INDEX "webhook_deliveries_running_replay_idx" ON "webhook_deliveries" USING btree ("webhook_id") WHERE "webhook_deliveries"."status" = 'pending' and "webhook_deliveries"."replay_id" is not null;