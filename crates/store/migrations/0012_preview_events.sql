-- A preview's outside requests (`outside_request` events of its build's proxy, docs/egress.md).
-- A preview runs after its build's log has ended with `complete`, and nothing may follow
-- `complete`, so they are kept in a log of their own per build, numbered 1, 2, 3… by the store.
CREATE TABLE preview_events (
    build_id TEXT NOT NULL,
    seq      INTEGER NOT NULL,
    ts       TEXT NOT NULL,
    -- The event's payload (`type` and its fields) as JSON.
    data     TEXT NOT NULL,
    PRIMARY KEY (build_id, seq)
) WITHOUT ROWID;
