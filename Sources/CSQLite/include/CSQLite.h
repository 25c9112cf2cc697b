#ifndef STOREGATE_CSQLITE_H
#define STOREGATE_CSQLITE_H

// SQLite's amalgamation, compiled with this target (VERSION.md): not the system's library.
#include "sqlite3.h"

/// Process-wide settings for the embedded ledger, applied once before the first connection
/// opens: memory statistics off (with them on, every allocation of every connection takes one
/// global mutex; the ledger never reads them). Returns SQLite's status (SQLITE_MISUSE when the
/// library was already initialized by someone else, which leaves the defaults in place).
int storegate_sqlite3_configure(void);

#endif
