-- The index's tables (`sjournal index`); {s} is the schema. Every row is a function of the
-- shipped bytes: no insertion times, no serial ids.
CREATE SCHEMA IF NOT EXISTS {s};
-- Every record, its payload as JSON (an event's own JSON; a system record's fields).
CREATE TABLE IF NOT EXISTS {s}.record (
  host text NOT NULL, stem text NOT NULL, stream text NOT NULL, seq bigint NOT NULL,
  ts_ns bigint NOT NULL, ts timestamptz NOT NULL, kind text NOT NULL,
  hash bytea NOT NULL, prev_hash bytea NOT NULL, event jsonb,
  PRIMARY KEY (host, stem, stream, seq));
-- One row per session (main journals): what the fold says of it.
CREATE TABLE IF NOT EXISTS {s}.session (
  host text NOT NULL, stem text NOT NULL, session_id text NOT NULL, agent_host text,
  cwd text, model text, started_ns bigint, started timestamptz, ended_ns bigint,
  ended timestamptz, end_reason text, records bigint NOT NULL, last_seq bigint NOT NULL,
  head text NOT NULL, state_hash text NOT NULL,
  PRIMARY KEY (host, stem));
CREATE TABLE IF NOT EXISTS {s}.file_touch (
  host text NOT NULL, stem text NOT NULL, stream text NOT NULL, seq bigint NOT NULL,
  path text NOT NULL, op text NOT NULL,
  PRIMARY KEY (host, stem, stream, seq, path, op));
CREATE INDEX IF NOT EXISTS file_touch_path ON {s}.file_touch (path);
CREATE TABLE IF NOT EXISTS {s}.command (
  host text NOT NULL, stem text NOT NULL, stream text NOT NULL, seq bigint NOT NULL,
  tool text NOT NULL, command text NOT NULL, exit_code int, failed bool NOT NULL,
  PRIMARY KEY (host, stem, stream, seq));
CREATE INDEX IF NOT EXISTS command_text ON {s}.command (command text_pattern_ops);
CREATE TABLE IF NOT EXISTS {s}.prompt (
  host text NOT NULL, stem text NOT NULL, stream text NOT NULL, seq bigint NOT NULL,
  text text NOT NULL,
  tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED,
  PRIMARY KEY (host, stem, stream, seq));
CREATE INDEX IF NOT EXISTS prompt_tsv ON {s}.prompt USING gin (tsv);
-- Bookkeeping: segments indexed, and each stream's head and fold state (to index the next
-- segment without reading the earlier ones again).
CREATE TABLE IF NOT EXISTS {s}.segment (
  host text NOT NULL, stem text NOT NULL, stream text NOT NULL, first_seq bigint NOT NULL,
  last_seq bigint NOT NULL, head text NOT NULL, blake3 text NOT NULL,
  PRIMARY KEY (host, stem, stream, first_seq));
CREATE TABLE IF NOT EXISTS {s}.stream (
  host text NOT NULL, stem text NOT NULL, stream text NOT NULL, session_id text NOT NULL,
  last_seq bigint NOT NULL, head text NOT NULL, fold_version int NOT NULL, state bytea NOT NULL,
  PRIMARY KEY (host, stem, stream));
-- Erased records (`erasure/<seq>` objects, checked as `verify --remote` checks them): the
-- record's row keeps seq, kind and hashes, says erased, and holds only what is left of its
-- payload; its facts are derived from that alone. `erased_by`: the seq of the chained
-- `sjournal.erased` record.
ALTER TABLE {s}.record ADD COLUMN IF NOT EXISTS erased bool NOT NULL DEFAULT false;
CREATE TABLE IF NOT EXISTS {s}.erasure (
  host text NOT NULL, stem text NOT NULL, stream text NOT NULL, seq bigint NOT NULL,
  erased_by bigint NOT NULL, blake3 text NOT NULL,
  PRIMARY KEY (host, stem, stream, seq));
