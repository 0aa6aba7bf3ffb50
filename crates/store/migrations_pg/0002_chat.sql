-- The tutoring chat and the in-app assistant on PostgreSQL: the SQLite store's 0007 and 0008.
-- Flags are BOOLEAN (SQLite keeps them as 0/1). Times are `COLLATE "C"` (and queries sort
-- ids and names as "C"): they compare byte by byte as in SQLite, whatever the database's locale.

-- The tutoring chat. A conversation belongs to one user; its messages keep their typed parts
-- as one JSON array (read whole, never queried inside), beside flags of what kinds of content
-- they hold so lists and search need not parse them. Each chat turn is also a run (kind
-- 'chat') whose events replay the reply; `run_id` points at it.

CREATE TABLE conversations (
    id         TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL,
    -- Empty until the first user message names it.
    title      TEXT NOT NULL DEFAULT '',
    created_at TEXT COLLATE "C" NOT NULL,
    updated_at TEXT COLLATE "C" NOT NULL
);
-- A user's list, most recently active first.
CREATE INDEX conversations_user ON conversations (user_id, updated_at);

CREATE TABLE chat_messages (
    id              TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    -- Order within the conversation, from 0; given out inside the writing transaction.
    pos             BIGINT NOT NULL,
    -- user | assistant
    role            TEXT NOT NULL,
    -- JSON array of Part.
    parts           TEXT NOT NULL,
    has_diagram     BOOLEAN NOT NULL DEFAULT FALSE,
    has_quiz        BOOLEAN NOT NULL DEFAULT FALSE,
    has_flashcards  BOOLEAN NOT NULL DEFAULT FALSE,
    has_videos      BOOLEAN NOT NULL DEFAULT FALSE,
    has_code        BOOLEAN NOT NULL DEFAULT FALSE,
    -- JSON array of the names of the tools that took part in the reply (feedback per tool).
    tools           TEXT NOT NULL DEFAULT '[]',
    run_id          TEXT,
    -- The user's 1 (up) or -1 (down) on an assistant's reply.
    feedback        BIGINT,
    created_at      TEXT COLLATE "C" NOT NULL,
    UNIQUE (conversation_id, pos)
);

-- Each user's deck, with the spaced-repetition scheduler's state per card.
CREATE TABLE flashcards (
    id             TEXT PRIMARY KEY,
    user_id        TEXT NOT NULL,
    front          TEXT NOT NULL,
    back           TEXT NOT NULL,
    created_at     TEXT COLLATE "C" NOT NULL,
    due            TEXT COLLATE "C" NOT NULL,
    stability      DOUBLE PRECISION NOT NULL,
    difficulty     DOUBLE PRECISION NOT NULL,
    elapsed_days   BIGINT NOT NULL,
    scheduled_days BIGINT NOT NULL,
    reps           BIGINT NOT NULL,
    lapses         BIGINT NOT NULL,
    -- new | learning | review | relearning
    state          TEXT NOT NULL,
    last_review    TEXT COLLATE "C",
    -- A card the tutor makes again (the same front) is not added to the deck twice.
    UNIQUE (user_id, front)
);
-- The cards due for review, soonest first.
CREATE INDEX flashcards_due ON flashcards (user_id, due);
-- The in-app assistant: turns that wait for the user's page to run tool calls, the calls
-- themselves, embed keys that put an assistant in an app, and the anonymous visitors of those
-- apps.

-- An assistant turn's state between rounds: what the model has been told this turn
-- (`transcript`, a JSON array of the provider's messages after the history), the round it is
-- in, and whether it runs on a server (`running`), waits for the page (`waiting`) or is over.
CREATE TABLE assistant_turns (
    run_id          TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    user_id         TEXT NOT NULL,
    -- `wright` (wright's own UI) or `key:<embed key id>`.
    assistant       TEXT NOT NULL,
    lang            TEXT NOT NULL,
    -- JSON array of the client tool names this turn's page runs.
    client_tools    TEXT NOT NULL,
    transcript      TEXT NOT NULL,
    -- JSON array of Part gathered for the reply (documents found).
    parts           TEXT NOT NULL DEFAULT '[]',
    round           BIGINT NOT NULL DEFAULT 0,
    state           TEXT NOT NULL,
    updated_at      TEXT COLLATE "C" NOT NULL
);
CREATE INDEX assistant_turns_waiting ON assistant_turns (conversation_id, state);

-- Every tool call of an assistant turn's rounds, server tools (answered at once) and client
-- tools (pending until the page posts a result, or closed as cancelled or expired).
CREATE TABLE assistant_calls (
    id              TEXT PRIMARY KEY,
    run_id          TEXT NOT NULL REFERENCES assistant_turns (run_id) ON DELETE CASCADE,
    conversation_id TEXT NOT NULL,
    round           BIGINT NOT NULL,
    -- Order within the round, as the model called them.
    pos             BIGINT NOT NULL,
    name            TEXT NOT NULL,
    arguments       TEXT NOT NULL,
    -- sha256 of the arguments, for logs and duplicate detection without the text.
    args_hash       TEXT NOT NULL,
    -- `client` or `server`.
    side            TEXT NOT NULL,
    read_only       BOOLEAN NOT NULL,
    deadline        TEXT COLLATE "C" NOT NULL,
    -- pending | answered | cancelled | expired
    status          TEXT NOT NULL,
    output          TEXT,
    error           TEXT,
    answered_at     TEXT COLLATE "C",
    UNIQUE (run_id, round, pos)
);
CREATE INDEX assistant_calls_pending ON assistant_calls (conversation_id, status);
CREATE INDEX assistant_calls_deadline ON assistant_calls (status, deadline);

-- A key that lets an app's pages use an assistant: only the chat routes, only from its
-- origins, at its own rate; its owner can revoke it. Only the key's hash is kept.
CREATE TABLE embed_keys (
    id          TEXT PRIMARY KEY,
    key_hash    TEXT NOT NULL UNIQUE,
    owner_id    TEXT NOT NULL,
    name        TEXT NOT NULL,
    -- JSON array of allowed origins (`https://app.example`).
    origins     TEXT NOT NULL,
    -- JSON array of ClientToolDef: the tools the app's pages run.
    tools       TEXT NOT NULL,
    -- The folder of documents its assistant searches, if any.
    docs_dir    TEXT,
    per_hour    BIGINT NOT NULL,
    created_at  TEXT COLLATE "C" NOT NULL,
    revoked_at  TEXT COLLATE "C"
);
CREATE INDEX embed_keys_owner ON embed_keys (owner_id);

-- An anonymous visitor of an app with an embed key: an unguessable token (kept hashed) that
-- owns the visitor's conversations and nothing else.
CREATE TABLE visitors (
    id          TEXT PRIMARY KEY,
    token_hash  TEXT NOT NULL UNIQUE,
    key_id      TEXT NOT NULL REFERENCES embed_keys (id) ON DELETE CASCADE,
    created_at  TEXT COLLATE "C" NOT NULL
);
