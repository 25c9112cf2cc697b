import Foundation
import Hummingbird
import Logging
import StoreGateCore
import StoreGateLedger

/// `POST /v1/accounts/{account}/transfers` (`TransferRequest`): the family to move to the account.
struct TransferRequestBody: JSONRequestBody {
    let environment: AppStoreEnvironment
    let originalTransactionId: String
    let reason: String

    init(_ object: RequestObject) throws(APIError) {
        try object.rejectUnknownMembers(["environment", "originalTransactionId", "reason"])
        let name = try object.string("environment")
        guard let environment = AppStoreEnvironment(name: name) else {
            throw APIError.badField("environment", .invalidField, "'environment' is Production, Sandbox, Xcode, LocalTesting or Test")
        }
        self.environment = environment
        originalTransactionId = try object.string("originalTransactionId")
        reason = try object.string("reason")
    }
}

/// A manual move's reply (`TransferOutcome`).
struct TransferOutcomeReply: JSONWritable {
    let outcome: TransferOutcome

    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("environment", outcome.environment.rawValue)
            json.member("originalTransactionId", outcome.originalTransactionId)
            json.member("from", outcome.from.rawValue)
            json.member("to", outcome.to.rawValue)
            json.member("isMoved", outcome.isMoved)
            json.member("transferId", outcome.transferId)
            json.member("transactionIds", outcome.transactionIds)
        }
    }
}

extension Endpoints {
    /// Moves a purchase family to the account by hand: 201 when it moved, 200 when the account
    /// owned it already (a retry). Audited: the acting key's name and the reason are in both
    /// accounts' `purchase.transferred` events.
    @Sendable func createTransfer(_ request: Request, context: StoreGateRequestContext) async throws -> Response {
        let account = try Self.account(try Self.pathParameter("account", context), field: "account")
        let body = try await decode(TransferRequestBody.self, request)
        let outcome = try await transfer(
            TransferRequest(
                environment: body.environment, originalTransactionId: body.originalTransactionId, account: account, reason: body.reason,
                transferredBy: context.apiKeyName ?? "unknown", date: now()
            ),
            context: context
        )
        return JSONReply.response(TransferOutcomeReply(outcome: outcome), status: outcome.isMoved ? .created : .ok)
    }

    /// Support's move, the ledger's refusals as replies (404 `purchase_not_found`, 409
    /// `app_account_token_mismatch`, 400 for a bad reason), logged when it moved.
    func transfer(_ request: TransferRequest, context: StoreGateRequestContext) async throws(APIError) -> TransferOutcome {
        let outcome: TransferOutcome
        do throws(LedgerError) {
            outcome = try await ledger.transfer(request)
        } catch where error.code == .purchaseNotFound {
            throw APIError(.notFound, APIErrorCode(.purchaseNotFound), error.reason, field: "originalTransactionId")
        } catch {
            throw APIError.ledger(error, argumentStatus: .badRequest, logger: context.logger)
        }
        context.logger.info("purchase transferred by hand", metadata: [
            "account": "\(request.account.rawValue)", "from": "\(outcome.from.rawValue)", "original_transaction_id": "\(outcome.originalTransactionId)",
            "moved": "\(outcome.isMoved)", "transfer.id": "\(outcome.transferId ?? "-")",
        ])
        return outcome
    }

    /// Purchases moved between accounts by hand.
    var transferRoutes: [Route] {
        [
            Route(.post, "/v1/accounts/:account/transfers", .apiKey(.transfersManage), createTransfer),
        ]
    }
}
