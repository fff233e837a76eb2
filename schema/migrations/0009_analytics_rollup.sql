-- The analytics aggregate (email_daily_counts) kept by statement-level
-- triggers on emails: one upsert per statement, not per row. Counts are per
-- UTC day of the email's creation. A purge of old email rows keeps them (no
-- delete trigger): analytics outlive the email log's retention.
-- Each message counts once under '' (every email) and once under each of its
-- distinct tags (UNION: a tag given twice is counted once). Each statement's
-- upsert goes in key order, so two statements never wait on each other's
-- counts in opposite orders (no deadlock between single-statement writers).

CREATE FUNCTION email_daily_counts_from_domain(from_header text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(lower(substring(from_header from '@([^@<>[:space:]]+)>?[[:space:]]*$')), '')
$$;--> statement-breakpoint


CREATE FUNCTION email_daily_counts_on_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO email_daily_counts (project_id, day, from_domain, tag, status, count)
  SELECT e.project_id, (e.created_at AT TIME ZONE 'UTC')::date, email_daily_counts_from_domain(m."from"), t.tag, e.status, count(*)
    FROM new_rows e
    JOIN outbound_messages m ON m.id = e.message_id
   CROSS JOIN LATERAL (SELECT '' UNION SELECT unnest(m.tags)) AS t(tag)
   GROUP BY 1, 2, 3, 4, 5
   ORDER BY 1, 2, 3, 4, 5
  ON CONFLICT (project_id, day, from_domain, tag, status)
  DO UPDATE SET count = email_daily_counts.count + excluded.count;
  RETURN NULL;
END
$$;--> statement-breakpoint

CREATE FUNCTION email_daily_counts_on_update() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO email_daily_counts (project_id, day, from_domain, tag, status, count)
  SELECT project_id, day, from_domain, tag, status, sum(n)
    FROM (
      SELECT nr.project_id, (nr.created_at AT TIME ZONE 'UTC')::date AS day, email_daily_counts_from_domain(m."from") AS from_domain,
             t.tag, s.status, s.n
        FROM new_rows nr
        JOIN old_rows o ON o.id = nr.id AND o.status IS DISTINCT FROM nr.status
        JOIN outbound_messages m ON m.id = nr.message_id
       CROSS JOIN LATERAL (SELECT '' UNION SELECT unnest(m.tags)) AS t(tag)
       CROSS JOIN LATERAL (VALUES (nr.status, 1::bigint), (o.status, -1::bigint)) AS s(status, n)
    ) AS moved
   GROUP BY 1, 2, 3, 4, 5
  HAVING sum(n) <> 0
   ORDER BY 1, 2, 3, 4, 5
  ON CONFLICT (project_id, day, from_domain, tag, status)
  DO UPDATE SET count = email_daily_counts.count + excluded.count;
  RETURN NULL;
END
$$;--> statement-breakpoint

CREATE TRIGGER emails_daily_counts_insert AFTER INSERT ON emails
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION email_daily_counts_on_insert();--> statement-breakpoint

CREATE TRIGGER emails_daily_counts_update AFTER UPDATE ON emails
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION email_daily_counts_on_update();--> statement-breakpoint

-- What was sent before this migration.
INSERT INTO email_daily_counts (project_id, day, from_domain, tag, status, count)
SELECT e.project_id, (e.created_at AT TIME ZONE 'UTC')::date, email_daily_counts_from_domain(m."from"), t.tag, e.status, count(*)
  FROM emails e
  JOIN outbound_messages m ON m.id = e.message_id
 CROSS JOIN LATERAL (SELECT '' UNION SELECT unnest(m.tags)) AS t(tag)
 GROUP BY 1, 2, 3, 4, 5;
