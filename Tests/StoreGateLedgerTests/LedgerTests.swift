import Testing

/// The ledger's tests. The PostgreSQL server the backend tests use is started once around
/// this suite (see ``PostgresForTests``).
@Suite("StoreGate ledger", .temporaryPostgres)
struct LedgerTests {}
