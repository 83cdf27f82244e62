/**
 * The SQL of the PostgreSQL wallet store, apart from its bookkeeping: each statement is one round trip and one
 * implicit transaction, so a gateway call costs the wallet row no lock of its own (see wallets.store.ts).
 */

/** A credit (or operator debit) written through: the balance and its ledger entry in one statement. */
export const APPLY_CREDIT = `WITH w AS (
    INSERT INTO wallets (org_id, balance_micros, updated_at) VALUES ($1, $2, $3)
    ON CONFLICT (org_id) DO UPDATE SET balance_micros = wallets.balance_micros + $2, updated_at = $3
    RETURNING balance_micros)
  INSERT INTO wallet_entries (org_id, amount_micros, balance_after_micros, reason, created_at)
  SELECT $1, $2, balance_micros, $4, $3 FROM w RETURNING balance_after_micros AS balance_micros`;

/** Gives back a hold row (when it still exists): the row goes, `held_micros` drops by its amount. */
export const RELEASE_ROW = `WITH h AS (DELETE FROM wallet_holds WHERE id = $1 RETURNING org_id, micros)
  UPDATE wallets w SET held_micros = w.held_micros - h.micros FROM h WHERE w.org_id = h.org_id`;

/** Gives back every lapsed hold row of an organisation (a dead replica's allowance, a pre-allowance hold). */
export const RELEASE_LAPSED = `WITH h AS (DELETE FROM wallet_holds WHERE org_id = $1 AND expires_at < now() RETURNING micros)
  UPDATE wallets SET held_micros = held_micros - (SELECT COALESCE(SUM(micros), 0) FROM h)
   WHERE org_id = $1 AND EXISTS (SELECT 1 FROM h)`;

/**
 * Tops a replica's allowance up: ONE conditional UPDATE of `held_micros`. It grants `$3` (the slice this replica
 * would like) while at least four such slices are free, else only `$2` (what the waiting call lacks), so a nearly
 * empty wallet is shared call by call exactly as holds were. The row lock taken by `FOR UPDATE` re-checks the
 * condition on the newest row version (READ COMMITTED), so no number of replicas can hold more than the balance.
 * The allowance's row in `wallet_holds` (id `$4`) grows by the grant and its lapse time moves to now + `$5` s.
 * Returns the grant (null when even `$2` does not fit), the row's new size and the balance.
 */
export const TOP_UP = `WITH g AS (
    SELECT CASE WHEN balance_micros - held_micros >= $3::bigint * 4 THEN $3::bigint ELSE $2::bigint END AS micros,
           balance_micros
      FROM wallets WHERE org_id = $1 AND balance_micros - held_micros >= $2::bigint FOR UPDATE),
  u AS (UPDATE wallets w SET held_micros = w.held_micros + g.micros FROM g WHERE w.org_id = $1
        RETURNING g.micros, w.balance_micros),
  h AS (INSERT INTO wallet_holds (id, org_id, micros, expires_at)
        SELECT $4, $1, micros, now() + make_interval(secs => $5) FROM u
        ON CONFLICT (id) DO UPDATE SET micros = wallet_holds.micros + EXCLUDED.micros, expires_at = EXCLUDED.expires_at
        RETURNING micros)
  SELECT (SELECT micros FROM u) AS granted, (SELECT micros FROM h) AS slice, (SELECT balance_micros FROM u) AS balance`;

/**
 * Writes one organisation's share of a batch: the balance drops by the debits (`$3`), the allowance row `$2` and
 * `held_micros` drop by what the batch takes out of the allowance (`$4`: money that was held for the settled calls,
 * plus any idle money given back) — never by more than the row still holds, so an allowance that lapsed meanwhile
 * is only debited. The row goes when it reaches zero. The ledger gets one row per debit (`$7..$9`, in order; `$8`
 * is what the later debits of the batch add back, so each row records the balance it left). Returns the balance.
 */
export const WRITE_BATCH = `WITH s AS (SELECT id, micros FROM wallet_holds WHERE id = $2 FOR UPDATE),
  d AS (DELETE FROM wallet_holds h USING s WHERE h.id = s.id AND s.micros <= $4::bigint RETURNING s.micros AS m),
  u AS (UPDATE wallet_holds h SET micros = h.micros - $4::bigint, expires_at = now() + make_interval(secs => $5)
          FROM s WHERE h.id = s.id AND s.micros > $4::bigint RETURNING $4::bigint AS m),
  w AS (INSERT INTO wallets (org_id, balance_micros, updated_at) VALUES ($1, -$3::bigint, $6)
        ON CONFLICT (org_id) DO UPDATE SET balance_micros = wallets.balance_micros - $3::bigint,
          held_micros = wallets.held_micros - COALESCE((SELECT m FROM d), (SELECT m FROM u), 0), updated_at = $6
        RETURNING balance_micros),
  e AS (INSERT INTO wallet_entries (org_id, amount_micros, balance_after_micros, reason, created_at)
        SELECT $1, -x.amount, w.balance_micros + x.after, x.reason, x.at
          FROM w, unnest($7::bigint[], $8::bigint[], $9::text[], $10::timestamptz[]) WITH ORDINALITY
               AS x(amount, after, reason, at, n)
         ORDER BY x.n)
  SELECT balance_micros FROM w`;

/** Keeps live allowances from lapsing. */
export const REFRESH = `UPDATE wallet_holds SET expires_at = now() + make_interval(secs => $2) WHERE id = ANY($1::text[])`;
