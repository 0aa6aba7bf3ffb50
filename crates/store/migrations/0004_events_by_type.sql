-- The dashboard counts one kind of event (error_detected) over a time window; without this
-- it would read every event of every build.
CREATE INDEX events_type_ts ON events (type, ts);
