-- wright task: a run of a task file is a build (template 'task'), so its events, turns and
-- usage are kept and streamed as a build's are. Each task of the run gets a row here with its
-- outcome and the seed-shaped result, so a run can be shown, resumed (the tasks that passed
-- are not run again) and compared with the file it came from (`plan_hash`).

CREATE TABLE task_results (
    run_id      TEXT NOT NULL REFERENCES builds (id) ON DELETE CASCADE,
    task_id     TEXT NOT NULL,
    -- Position in the order the run took (dependencies first).
    position    INTEGER NOT NULL,
    kind        TEXT NOT NULL,
    -- passed | failed | skipped | not_run
    status      TEXT NOT NULL,
    message     TEXT NOT NULL,
    -- The TaskResult as JSON: {message, ai_result, validation_details}.
    result      TEXT NOT NULL,
    -- SHA-256 of the task's definition, so a resumed run notices a task that was edited.
    task_hash   TEXT NOT NULL,
    started_at  TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    PRIMARY KEY (run_id, task_id)
) WITHOUT ROWID;
