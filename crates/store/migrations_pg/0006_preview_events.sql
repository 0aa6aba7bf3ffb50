-- The SQLite store's 0011, on PostgreSQL: a preview's outside requests, a log per build.
CREATE TABLE preview_events (
    build_id TEXT NOT NULL,
    seq      BIGINT NOT NULL,
    ts       TEXT NOT NULL,
    data     TEXT NOT NULL,
    PRIMARY KEY (build_id, seq)
);
