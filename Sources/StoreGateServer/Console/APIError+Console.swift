import HTTPTypes
import Logging
import StoreGateConsole

extension APIError {
    /// The reply for a console request the console does not answer with a page: the same
    /// codes the API gives (a form too large, a path parameter not percent-encoded, a ledger
    /// failure).
    ///
    /// - Parameters:
    ///   - error: The console's error.
    ///   - logger: Where a ledger failure is logged.
    init(console error: ConsoleError, logger: Logger) {
        switch error.code {
        case .formTooLarge:
            self.init(.contentTooLarge, .bodyTooLarge, error.reason)
        case .invalidPathParameter:
            self = .badField(error.field ?? "", .invalidPathParameter, error.reason)
        case .ledgerFailed:
            if let ledgerError = error.ledgerError {
                self = .ledger(ledgerError, argumentStatus: .badRequest, logger: logger)
            } else {
                self = .internalError
            }
        case .webhookAddressRefused:
            self.init(error.status, .httpError, error.reason)
        }
    }
}
