-- Interrupted builds run again: `attempt` is which run of the build this is (1 for the first).
-- A build whose worker vanished (crash, kill -9) or whose server stopped past its grace time
-- goes back to the queue with attempt + 1, until the server's limit of re-runs.
ALTER TABLE builds ADD COLUMN attempt INTEGER NOT NULL DEFAULT 1;

-- Projects a task run (`wright task run`, as root) lent to the sandbox user. The row is written
-- before the files change owner and removed once they are given back, so a run killed in
-- between (kill -9) leaves a note the next start of wright acts on. `pid` and `pid_start` name
-- the process that lent it (a live run keeps its project).
CREATE TABLE lent_projects (
    run_id    TEXT PRIMARY KEY,
    path      TEXT NOT NULL,
    uid       INTEGER NOT NULL,
    gid       INTEGER NOT NULL,
    pid       INTEGER NOT NULL,
    pid_start TEXT NOT NULL,
    lent_at   TEXT NOT NULL
) WITHOUT ROWID;
