#ifndef STOREGATE_CSQLITE_H
#define STOREGATE_CSQLITE_H

// SQLite's amalgamation, compiled with this target (VERSION.md): not the system's library.
#include "sqlite3.h"
#include <stdint.h>

/// Process-wide settings for the embedded ledger, applied once before the first connection
/// opens: memory statistics off (with them on, every allocation of every connection takes one
/// global mutex; the ledger never reads them). Returns SQLite's status (SQLITE_MISUSE when the
/// library was already initialized by someone else, which leaves the defaults in place).
int storegate_sqlite3_configure(void);

/// What identifies a WAL database's committed state, from the WAL-index header in its shared
/// memory: the commit counter (iChange, moved by every commit and WAL restart), the last valid
/// frame, and the WAL's two salts (new at every restart).
typedef struct {
    uint32_t change;
    uint32_t lastFrame;
    uint32_t salt1;
    uint32_t salt2;
} storegate_wal_index_version;

/// Reads the WAL-index header of `db`'s main database as SQLite's own readers do (both copies,
/// a memory barrier between, equal, initialized, checksum right) from the shared memory the
/// connection already mapped, without a transaction, a lock or a system call. Returns 1 and
/// fills `out`; 0 when it cannot tell (no shared memory mapped yet, a write in progress, a
/// header of another format): the caller then asks `PRAGMA data_version`.
int storegate_sqlite3_wal_index_version(sqlite3 *db, storegate_wal_index_version *out);

#endif
