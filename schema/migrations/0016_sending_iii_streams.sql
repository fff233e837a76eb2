CREATE TABLE "message_streams" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" uuid NOT NULL,
	"name" text NOT NULL,
	"kind" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sender_health" (
	"project_id" uuid PRIMARY KEY NOT NULL,
	"complaint_rate" double precision DEFAULT 0 NOT NULL,
	"over_threshold_since" timestamp with time zone,
	"checked_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "unsubscribes" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" uuid NOT NULL,
	"email_id" uuid NOT NULL,
	"stream" text NOT NULL,
	"address" text NOT NULL,
	"method" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
DROP INDEX "suppressions_project_id_address_idx";--> statement-breakpoint
ALTER TABLE "email_daily_counts" ADD COLUMN "stream" text DEFAULT 'transactional' NOT NULL;--> statement-breakpoint
ALTER TABLE "email_daily_counts" DROP CONSTRAINT "email_daily_counts_project_id_day_from_domain_tag_status_pk";--> statement-breakpoint
ALTER TABLE "email_daily_counts" ADD CONSTRAINT "email_daily_counts_project_id_day_from_domain_tag_status_stream_pk" PRIMARY KEY("project_id","day","from_domain","tag","status","stream");--> statement-breakpoint
ALTER TABLE "suppressions" ADD COLUMN "stream" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "outbound_messages" ADD COLUMN "stream" text DEFAULT 'transactional' NOT NULL;--> statement-breakpoint
ALTER TABLE "outbound_messages" ADD COLUMN "list_unsubscribe" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "message_streams" ADD CONSTRAINT "message_streams_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sender_health" ADD CONSTRAINT "sender_health_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "unsubscribes" ADD CONSTRAINT "unsubscribes_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "message_streams_project_id_name_idx" ON "message_streams" USING btree ("project_id","name");--> statement-breakpoint
CREATE UNIQUE INDEX "unsubscribes_email_id_idx" ON "unsubscribes" USING btree ("email_id");--> statement-breakpoint
CREATE INDEX "unsubscribes_project_id_created_at_idx" ON "unsubscribes" USING btree ("project_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "suppressions_project_id_address_stream_idx" ON "suppressions" USING btree ("project_id","address","stream");--> statement-breakpoint

-- The analytics aggregate counts per stream too (docs/analytics.md): the
-- triggers of migration 0009 with the message's stream as one more key.
-- Rows counted before this migration are transactional (the only kind there was).
CREATE OR REPLACE FUNCTION email_daily_counts_on_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO email_daily_counts (project_id, day, from_domain, tag, status, stream, count)
  SELECT e.project_id, (e.created_at AT TIME ZONE 'UTC')::date, email_daily_counts_from_domain(m."from"), t.tag, e.status, m.stream, count(*)
    FROM new_rows e
    JOIN outbound_messages m ON m.id = e.message_id
   CROSS JOIN LATERAL (SELECT '' UNION SELECT unnest(m.tags)) AS t(tag)
   GROUP BY 1, 2, 3, 4, 5, 6
   ORDER BY 1, 2, 3, 4, 5, 6
  ON CONFLICT (project_id, day, from_domain, tag, status, stream)
  DO UPDATE SET count = email_daily_counts.count + excluded.count;
  RETURN NULL;
END
$$;--> statement-breakpoint

CREATE OR REPLACE FUNCTION email_daily_counts_on_update() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO email_daily_counts (project_id, day, from_domain, tag, status, stream, count)
  SELECT project_id, day, from_domain, tag, status, stream, sum(n)
    FROM (
      SELECT nr.project_id, (nr.created_at AT TIME ZONE 'UTC')::date AS day, email_daily_counts_from_domain(m."from") AS from_domain,
             t.tag, s.status, m.stream, s.n
        FROM new_rows nr
        JOIN old_rows o ON o.id = nr.id AND o.status IS DISTINCT FROM nr.status
        JOIN outbound_messages m ON m.id = nr.message_id
       CROSS JOIN LATERAL (SELECT '' UNION SELECT unnest(m.tags)) AS t(tag)
       CROSS JOIN LATERAL (VALUES (nr.status, 1::bigint), (o.status, -1::bigint)) AS s(status, n)
    ) AS moved
   GROUP BY 1, 2, 3, 4, 5, 6
  HAVING sum(n) <> 0
   ORDER BY 1, 2, 3, 4, 5, 6
  ON CONFLICT (project_id, day, from_domain, tag, status, stream)
  DO UPDATE SET count = email_daily_counts.count + excluded.count;
  RETURN NULL;
END
$$;
