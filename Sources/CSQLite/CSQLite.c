#include "CSQLite.h"

// sqlite3_config is variadic, which Swift cannot call: this is its one use.
int storegate_sqlite3_configure(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
