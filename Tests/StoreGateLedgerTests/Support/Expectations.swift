import StoreGateLedger
import Testing

/// Expects `body` to throw a ``LedgerError`` with `code`, and returns that error.
@discardableResult
func expectLedgerError<T>(
    _ code: LedgerError.Code,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> T
) async -> LedgerError? {
    do {
        _ = try await body()
        Issue.record("expected LedgerError \(code), but the call succeeded", sourceLocation: sourceLocation)
        return nil
    } catch let error as LedgerError {
        #expect(error.code == code, "expected \(code), got \(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected LedgerError \(code), got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}
