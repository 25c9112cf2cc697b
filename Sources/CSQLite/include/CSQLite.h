#ifndef STOREGATE_CSQLITE_H
#define STOREGATE_CSQLITE_H

// The system's SQLite 3: libsqlite3-dev on Debian and Ubuntu (one of Swift's own Linux
// prerequisites), the SDK's on macOS.
#include <sqlite3.h>

/// Process-wide settings for the embedded ledger, applied once before the first connection
/// opens: memory statistics off (with them on, every allocation of every connection takes one
/// global mutex; the ledger never reads them). Returns SQLite's status (SQLITE_MISUSE when the
/// library was already initialized by someone else, which leaves the defaults in place).
int storegate_sqlite3_configure(void);

#endif
