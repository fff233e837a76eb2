CREATE INDEX "inbound_emails_project_id_size_idx" ON "inbound_emails" USING btree ("project_id","size");--> statement-breakpoint
CREATE INDEX "outbox_handed_over_at_idx" ON "outbox" USING btree ("handed_over_at") WHERE "outbox"."handed_over_at" is not null;--> statement-breakpoint
CREATE INDEX "webhook_deliveries_completed_at_idx" ON "webhook_deliveries" USING btree ("completed_at") WHERE "webhook_deliveries"."status" <> 'pending';--> statement-breakpoint
CREATE INDEX "webhook_deliveries_redelivery_of_idx" ON "webhook_deliveries" USING btree ("redelivery_of") WHERE "webhook_deliveries"."redelivery_of" is not null;--> statement-breakpoint
CREATE INDEX "email_attempts_started_at_idx" ON "email_attempts" USING btree ("started_at");