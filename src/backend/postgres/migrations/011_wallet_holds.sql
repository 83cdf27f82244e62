-- 011: wallet holds as rows, so every replica sees the same money set aside. (No SQLite twin: a SQLite install has
-- one serving process, whose wallet store keeps holds in memory.)
-- `held_micros` is the sum of the live holds of a wallet; taking a hold is ONE conditional UPDATE
-- (`... SET held_micros = held_micros + $x WHERE balance_micros - held_micros >= $x`), which PostgreSQL serialises
-- on the row, so concurrent calls on any number of replicas can never hold more than the balance.

ALTER TABLE wallets ADD COLUMN held_micros BIGINT NOT NULL DEFAULT 0 CHECK (held_micros >= 0);

CREATE TABLE wallet_holds (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  micros BIGINT NOT NULL CHECK (micros > 0),
  expires_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX wallet_holds_expiry ON wallet_holds (org_id, expires_at);
