#!/usr/bin/env python3
"""Counts the pages SQLite reads from the file (page-cache misses) for one account's check on a
StoreGate SQLite ledger: the statements `SQLiteLedger.loadAccount` and `loadGrants` run (an
account's transactions, balances, renewal infos and notifications through its families, and
its grants), for random accounts of `bench scale`'s story, after a warm-up, with a page cache
of the given size. docs/scale.md ("Why the page cache is sized from the machine") quotes it.

  python3 Scripts/sqlite_page_reads.py LEDGER.sqlite ACCOUNTS CACHE_KIB [WARMUP]

  LEDGER.sqlite  a ledger `bench scale --keep DIR` left (scale-<size>.sqlite, opened read-only)
  ACCOUNTS       its accounts (the size / 10): subscriber-0 ... subscriber-(ACCOUNTS-1)
  CACHE_KIB      the page cache (PRAGMA cache_size) in KiB
  WARMUP         checks before counting (default 1000)

It uses the system's libsqlite3 through ctypes (Python's sqlite3 module does not expose
sqlite3_db_status); the statements must stay in step with SQLiteLedger+Rows.swift.
"""
import ctypes
import random
import sys

SQLITE_OK, SQLITE_ROW, SQLITE_OPEN_READONLY = 0, 100, 1
SQLITE_DBSTATUS_CACHE_HIT, SQLITE_DBSTATUS_CACHE_MISS = 7, 8

FAMILIES = (
    "FROM ledger_families f CROSS JOIN {table} x ON x.environment = f.environment "
    "AND x.original_transaction_id = f.original_transaction_id WHERE f.account_id = ?1"
)
STATEMENTS = {
    "transactions": "SELECT x.* " + FAMILIES.format(table="ledger_transactions"),
    "balances": "SELECT product_id, purchased, refunded, consumed FROM ledger_balances WHERE account_id = ?1",
    "renewals": "SELECT x.* " + FAMILIES.format(table="ledger_renewals"),
    "notifications": "SELECT x.notification_uuid, x.notification_type, x.subtype, x.signed_date, x.environment, "
    "x.transaction_id, x.original_transaction_id " + FAMILIES.format(table="ledger_notifications"),
    "grants": "SELECT * FROM ledger_grants WHERE account_id = ?1 ORDER BY starts_at DESC, id DESC",
}


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    path, accounts, cache_kib = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    warmup = int(sys.argv[4]) if len(sys.argv) > 4 else 1000
    lib = ctypes.CDLL("libsqlite3.so.0")
    lib.sqlite3_prepare_v2.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p]
    lib.sqlite3_bind_text.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_void_p]
    lib.sqlite3_step.argtypes = [ctypes.c_void_p]
    lib.sqlite3_reset.argtypes = [ctypes.c_void_p]
    lib.sqlite3_exec.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    lib.sqlite3_db_status.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int), ctypes.c_int]
    db = ctypes.c_void_p()
    if lib.sqlite3_open_v2(path.encode(), ctypes.byref(db), SQLITE_OPEN_READONLY, None) != SQLITE_OK:
        sys.exit(f"cannot open {path}")
    lib.sqlite3_exec(db, f"PRAGMA cache_size = -{cache_kib}".encode(), None, None, None)
    statements = {}
    for name, sql in STATEMENTS.items():
        statement = ctypes.c_void_p()
        if lib.sqlite3_prepare_v2(db, sql.encode(), -1, ctypes.byref(statement), None) != SQLITE_OK:
            sys.exit(f"cannot prepare the {name} statement (is this a StoreGate ledger?)")
        statements[name] = statement

    def status(op):
        current, highest = ctypes.c_int(), ctypes.c_int()
        lib.sqlite3_db_status(db, op, ctypes.byref(current), ctypes.byref(highest), 1)  # and reset
        return current.value

    def run(name, account):
        statement = statements[name]
        lib.sqlite3_bind_text(statement, 1, account.encode(), -1, ctypes.c_void_p(-1))  # SQLITE_TRANSIENT
        rows = 0
        while lib.sqlite3_step(statement) == SQLITE_ROW:
            rows += 1
        lib.sqlite3_reset(statement)
        return rows

    randomness = random.Random(1)
    # One read transaction: the cache is never emptied by a commit elsewhere while counting.
    lib.sqlite3_exec(db, b"BEGIN", None, None, None)
    for _ in range(warmup):
        account = f"subscriber-{randomness.randrange(accounts)}"
        for name in statements:
            run(name, account)
    status(SQLITE_DBSTATUS_CACHE_HIT)
    status(SQLITE_DBSTATUS_CACHE_MISS)
    checks = 500
    totals = {name: [0, 0, 0] for name in statements}  # hits, misses, rows
    for _ in range(checks):
        account = f"subscriber-{randomness.randrange(accounts)}"
        for name in statements:
            totals[name][2] += run(name, account)
            totals[name][0] += status(SQLITE_DBSTATUS_CACHE_HIT)
            totals[name][1] += status(SQLITE_DBSTATUS_CACHE_MISS)
    lib.sqlite3_exec(db, b"COMMIT", None, None, None)
    parts = ", ".join(f"{name} {hits / checks:.1f}/{misses / checks:.1f} ({rows / checks:.1f} rows)" for name, (hits, misses, rows) in totals.items())
    print(f"{path.split('/')[-1]}, page cache {cache_kib} KiB, per check (pages cached/read from the file): {parts}; "
          f"read from the file in all: {sum(misses for _, misses, _ in totals.values()) / checks:.1f}")


if __name__ == "__main__":
    main()
