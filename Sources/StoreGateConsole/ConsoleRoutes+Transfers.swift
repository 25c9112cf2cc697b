import Foundation
import Hummingbird
import Logging
import StoreGateCore
import StoreGateLedger

/// The account page's move form: support moves a purchase family to the account it is looking
/// at, in the signed-in key's name (which needs `transfers.manage`), as
/// `POST /v1/accounts/{account}/transfers` does.
extension Console {
    /// The environments the move form offers.
    static let transferEnvironments = ["Production", "Sandbox"]

    /// Whether the signed-in key may move purchases.
    func canTransfer(_ context: some ConsoleRequestContext) -> Bool {
        model.permissions(ofKeyNamed: context.consoleSession?.keyName ?? "").contains(.manageTransfers)
    }

    /// Moves the family the form names to the page's account, then shows the account again.
    @Sendable func transfer(_ request: Request, context: some ConsoleRequestContext) async throws -> Response {
        guard let form = try await checkedForm(request, context) else { return forbiddenForm(context) }
        guard let keyName = context.consoleSession?.keyName, canTransfer(context) else {
            return errorPage(.forbidden, "Not allowed", "Moving a purchase needs an API key with the transfers.manage permission.", context)
        }
        let account: AccountID
        do {
            account = try AccountID(try Self.pathParameter("account", context))
        } catch {
            return errorPage(.badRequest, "Not an account id", "Account ids are 1 to 256 printable characters.", context)
        }
        guard let environment = AppStoreEnvironment(name: form["environment"] ?? "") else {
            return errorPage(.badRequest, "Not an environment", "Choose Production or Sandbox.", context)
        }
        let original = (form["originalTransactionId"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        let reason = (form["reason"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        do throws(LedgerError) {
            let outcome = try await model.transfer(TransferRequest(
                environment: environment, originalTransactionId: original, account: account, reason: reason, transferredBy: keyName,
                date: model.now()
            ))
            context.logger.info("console: purchase transferred", metadata: [
                "account": "\(account.rawValue)", "from": "\(outcome.from.rawValue)", "original_transaction_id": "\(outcome.originalTransactionId)",
                "moved": "\(outcome.isMoved)",
            ])
        } catch where error.code == .purchaseNotFound {
            return errorPage(.notFound, "No such purchase", "No account owns a \(environment) purchase with that original transaction id.", context)
        } catch where error.code == .appAccountTokenMismatch {
            return errorPage(
                .conflict, "Not moved",
                "The purchase is bound to an appAccountToken that is not this account's: it can never move here.", context
            )
        } catch where error.code == .invalidArgument {
            return errorPage(.badRequest, "Not moved", error.reason, context)
        } catch {
            return ledgerFailure(error, context)
        }
        return Self.redirect("\(ConsoleViews.accountLink(account))#timeline")
    }
}
