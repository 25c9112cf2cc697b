// The system's SQLite 3 (Debian/Ubuntu: libsqlite3-dev, which Swift's own Linux
// prerequisites list; macOS: the SDK's).
#include <sqlite3.h>
