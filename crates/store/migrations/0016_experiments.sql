-- Experiments (docs/experiments.md): variants of how builds are made, assigned by hash and
-- frozen once started; a change makes a new experiment. At most one runs at a time.
CREATE TABLE experiments (
    id             TEXT PRIMARY KEY,
    name           TEXT NOT NULL,
    salt           TEXT NOT NULL,
    -- `user` (a person keeps one variant) or `build`.
    unit           TEXT NOT NULL,
    -- JSON: [{name, weight, model?, prompt_version?, note_budget?, starter_policy?}]
    variants       TEXT NOT NULL,
    primary_metric TEXT NOT NULL,
    -- JSON: ["cost", "duration", ...]
    guardrails     TEXT NOT NULL DEFAULT '[]',
    -- Builds per arm at which the primary metric's test is read (a fixed horizon).
    horizon        INTEGER NOT NULL,
    -- `draft`, `running` or `stopped`.
    state          TEXT NOT NULL,
    -- The variant made the default when it was stopped, if any.
    promoted       TEXT,
    created_at     TEXT NOT NULL,
    started_at     TEXT,
    stopped_at     TEXT
);
CREATE UNIQUE INDEX experiments_one_running ON experiments (state) WHERE state = 'running';

-- Which experiment and variant a build ran under.
ALTER TABLE builds ADD COLUMN experiment_id TEXT;
ALTER TABLE builds ADD COLUMN variant TEXT;
CREATE INDEX builds_experiment ON builds (experiment_id, variant) WHERE experiment_id IS NOT NULL;

-- A person's verdict on a build: one per build (its owner's), changed in place.
CREATE TABLE build_feedback (
    build_id   TEXT PRIMARY KEY,
    user_id    TEXT,
    -- 1 (thumbs up) or -1 (thumbs down).
    value      INTEGER NOT NULL CHECK (value IN (-1, 1)),
    comment    TEXT,
    -- The value whose confidence update the build's notes have had (0: none yet), so a
    -- repeated rating does not move them twice.
    notes_moved INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
) WITHOUT ROWID;
