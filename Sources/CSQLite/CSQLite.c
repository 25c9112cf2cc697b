#include "CSQLite.h"

#include <string.h>

// sqlite3_config is variadic, which Swift cannot call: this is its one use.
int storegate_sqlite3_configure(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

// The WAL-index header as this SQLite (VERSION.md) lays it out at the start of the `-shm`
// file, twice: https://sqlite.org/walformat.html#the_wal_index_file_format (struct
// WalIndexHdr in sqlite3.c). 48 bytes, native byte order.
typedef struct {
    uint32_t iVersion;
    uint32_t unused;
    uint32_t iChange;
    uint8_t isInit;
    uint8_t bigEndCksum;
    uint16_t szPage;
    uint32_t mxFrame;
    uint32_t nPage;
    uint32_t aFrameCksum[2];
    uint32_t aSalt[2];
    uint32_t aCksum[2];
} storegate_wal_index_header;

_Static_assert(sizeof(storegate_wal_index_header) == 48, "the WAL-index header is 48 bytes");

int storegate_sqlite3_wal_index_version(sqlite3 *db, storegate_wal_index_version *out) {
    sqlite3_file *file = 0;
    if (sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &file) != SQLITE_OK || file == 0) return 0;
    const sqlite3_io_methods *methods = file->pMethods;
    if (methods == 0 || methods->iVersion < 2 || methods->xShmMap == 0 || methods->xShmBarrier == 0) return 0;
    // The first 32 KiB region, which the connection mapped when it first read the WAL; with
    // bExtend 0 nothing is created: a file without one answers NULL.
    volatile void *region = 0;
    if (methods->xShmMap(file, 0, 32768, 0, &region) != SQLITE_OK || region == 0) return 0;
    // SQLite's own reading (walIndexTryHdr): copy [0], barrier, copy [1]; a writer writes [1]
    // first. Copies that differ are a write in progress; a checksum that fails, a torn one.
    const volatile storegate_wal_index_header *headers = (const volatile storegate_wal_index_header *)region;
    storegate_wal_index_header first, second;
    memcpy(&first, (const void *)&headers[0], sizeof first);
    methods->xShmBarrier(file);
    memcpy(&second, (const void *)&headers[1], sizeof second);
    if (memcmp(&first, &second, sizeof first) != 0 || first.isInit == 0 || first.iVersion != 3007000) return 0;
    const uint32_t *words = (const uint32_t *)&first;
    uint32_t s1 = 0, s2 = 0;
    for (int index = 0; index < 10; index += 2) {  // every field before aCksum, natively
        s1 += words[index] + s2;
        s2 += words[index + 1] + s1;
    }
    if (s1 != first.aCksum[0] || s2 != first.aCksum[1]) return 0;
    out->change = first.iChange;
    out->lastFrame = first.mxFrame;
    out->salt1 = first.aSalt[0];
    out->salt2 = first.aSalt[1];
    return 1;
}
