-- The TLS generation: one row, bumped once per statement that changes
-- certificates or listener assignments, whoever runs it (the edge, the offline
-- `tls` commands, an operator's SQL). Relay nodes poll with the generation they
-- hold and are answered "unchanged" from this row alone. A statement that
-- changes no row (an upsert that loses) does not bump it.
INSERT INTO tls_state (id, generation) VALUES (1, 1) ON CONFLICT DO NOTHING;--> statement-breakpoint

CREATE FUNCTION tls_state_bump() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  -- Nested: a TRUNCATE trigger has no changed_rows to plan a query on.
  IF TG_OP <> 'TRUNCATE' THEN
    IF NOT EXISTS (SELECT 1 FROM changed_rows) THEN RETURN NULL; END IF;
  END IF;
  UPDATE tls_state SET generation = generation + 1, changed_at = now() WHERE id = 1;
  RETURN NULL;
END
$$;--> statement-breakpoint

-- A trigger with a transition table takes one event, hence one per event.
CREATE TRIGGER certificates_tls_insert AFTER INSERT ON certificates
REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION tls_state_bump();--> statement-breakpoint
CREATE TRIGGER certificates_tls_update AFTER UPDATE ON certificates
REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION tls_state_bump();--> statement-breakpoint
CREATE TRIGGER certificates_tls_delete AFTER DELETE ON certificates
REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION tls_state_bump();--> statement-breakpoint
CREATE TRIGGER certificates_tls_truncate AFTER TRUNCATE ON certificates
FOR EACH STATEMENT EXECUTE FUNCTION tls_state_bump();--> statement-breakpoint

CREATE TRIGGER listener_certificates_tls_insert AFTER INSERT ON listener_certificates
REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION tls_state_bump();--> statement-breakpoint
CREATE TRIGGER listener_certificates_tls_update AFTER UPDATE ON listener_certificates
REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION tls_state_bump();--> statement-breakpoint
CREATE TRIGGER listener_certificates_tls_delete AFTER DELETE ON listener_certificates
REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION tls_state_bump();--> statement-breakpoint
CREATE TRIGGER listener_certificates_tls_truncate AFTER TRUNCATE ON listener_certificates
FOR EACH STATEMENT EXECUTE FUNCTION tls_state_bump();
