import HTTPTypes
import Logging
import StoreGateLedger

extension APIError {
    /// The reply for a ledger failure.
    ///
    /// Refusals the caller can act on keep the ledger's code and reason (which never name
    /// another account, a proof or a key): 409 for conflicts (`owned_by_another_account`,
    /// `insufficient_balance`, …), 400/422 for bad arguments, 410 for an events cursor below
    /// what retention kept (`cursor_expired`). Storage failures answer 503
    /// (`ledger_unavailable`, with `Retry-After` when retrying may help) and everything else
    /// 500 (`ledger_error`), their reasons going to the log only.
    ///
    /// - Parameters:
    ///   - error: The ledger's error.
    ///   - argumentStatus: The status for ``LedgerError/Code/invalidArgument`` (400 when the
    ///     caller sent the argument, 422 when it came from a proof).
    ///   - logger: Where storage failures are logged.
    static func ledger(_ error: LedgerError, argumentStatus: HTTPResponse.Status = .unprocessableContent, logger: Logger) -> APIError {
        let code = APIErrorCode(error.code)
        switch error.code {
        case .invalidAccount:
            return APIError(.badRequest, code, error.reason, field: "account")
        case .invalidArgument:
            return APIError(argumentStatus, code, error.reason)
        case .environmentMismatch:
            return APIError(.unprocessableContent, code, error.reason)
        case .ownedByAnotherAccount, .appAccountTokenMismatch, .inconsistentTransaction, .idempotencyKeyReused, .alreadyExists, .concurrentUpdate:
            return APIError(.conflict, code, error.reason)
        case .insufficientBalance:
            var reply = APIError(.conflict, code, error.reason)
            reply.available = error.available
            return reply
        case .cursorExpired:
            return APIError(.gone, code, error.reason)
        case .closed:
            var reply = APIError(.serviceUnavailable, .shuttingDown, "the service is shutting down; retry on another instance")
            reply.isRetryable = true
            return reply
        case .storage:
            logger.error("ledger storage failure", metadata: ["ledger.code": "\(code)", "ledger.reason": "\(error.reason)", "retryable": "\(error.isRetryable)"])
            var reply = APIError(.serviceUnavailable, .ledgerUnavailable, "the ledger could not complete the request")
            reply.isRetryable = error.isRetryable
            if error.isRetryable { reply.headers[.retryAfter] = "1" }
            return reply
        default:
            logger.error("ledger failure", metadata: ["ledger.code": "\(code)", "ledger.reason": "\(error.reason)"])
            return APIError(.internalServerError, .ledgerError, "the ledger failed; the failure was logged")
        }
    }
}
