#!/bin/sh
# Copies the analytics rollups (ledger_rollups: all that `bench analytics` and
# GET /v1/analytics read) from a SQLite ledger into a PostgreSQL ledger that already has
# the current schema (let StoreGate migrate an empty database first, e.g.
# `storegate analytics rebuild --database URL --skip-backfill`). The SQLite file is opened
# read-only. The PostgreSQL rollups are replaced; nothing else is copied, so the target then
# answers the metrics but holds no transactions (do not run `analytics rebuild` on it: that
# would recompute empty rollups). For a whole ledger, use `storegate migrate`.
#
#   Scripts/copy-rollups-sqlite-to-postgres.sh /tmp/analytics-1e6.sqlite 'postgres://postgres@127.0.0.1:5432/analytics'
set -eu
if [ $# -ne 2 ]; then echo "usage: $0 LEDGER.sqlite POSTGRES_URL" >&2; exit 2; fi
sqlite_file=$1
url=$2
columns="measure, environment, day, product_id, subscription_group, storefront, currency, offer, count, amount"
{
    echo "BEGIN;"
    echo "DELETE FROM ledger_rollups;"
    echo "COPY ledger_rollups ($columns) FROM STDIN WITH (FORMAT csv, FORCE_NOT_NULL (product_id, subscription_group, storefront, currency, offer));"
    sqlite3 -readonly -csv "$sqlite_file" "SELECT $columns FROM ledger_rollups"
    echo '\.'
    echo "UPDATE ledger_analytics_state SET needs_rebuild = false;"
    echo "COMMIT;"
    echo "VACUUM ANALYZE ledger_rollups;"
} | psql -v ON_ERROR_STOP=1 -q "$url"
psql -At "$url" -c "SELECT 'rollups copied: ' || count(*) FROM ledger_rollups"
