-- 021: an exchanged authorization code is kept (marked redeemed) until it would have expired, instead of deleted,
-- so a replay is recognised by every replica and revokes the tokens issued for it (OAuth 2.1 §4.1.3).
ALTER TABLE oauth_codes ADD COLUMN redeemed_at INTEGER;
