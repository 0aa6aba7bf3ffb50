-- The SQLite store's 0011, on PostgreSQL.
-- An assistant call's id is the server's own (unique in the store, minted per call); the id the
-- provider gave the call is kept beside it, for the provider's own transcript. Providers reuse
-- ids across answers (Gemini before 3 and parsers without ids say `call_0`, `call_1`, … every
-- time), so a provider's id names a call only within one answer, never in the store.
ALTER TABLE assistant_calls ADD COLUMN provider_id TEXT NOT NULL DEFAULT '';
-- Calls recorded before: their id was the provider's.
UPDATE assistant_calls SET provider_id = id;
