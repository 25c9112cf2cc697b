import Foundation
import Hummingbird
import StoreGateCore
import StoreGateLedger
import StoreGateSync

/// The reply of `POST /v1/accounts/{account}/refresh` (`RefreshReply`).
struct RefreshReply: JSONWritable {
    let report: AccountRefresher.Report

    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("account", report.account.rawValue)
            json.member("families", report.families)
            json.member("transactions", report.transactions)
            json.member("newTransactions", report.newTransactions)
            json.member("updatedTransactions", report.updatedTransactions)
            json.member("refusedFamilies", report.refused)
        }
    }
}

extension Endpoints {
    /// `POST /v1/accounts/{account}/refresh`: asks Apple for the account's transaction history
    /// and subscription statuses and records what the ledger lacks (refunds, renewals after the
    /// last receipt, revocations, upgrades). 429 with `Retry-After` when the account was just
    /// refreshed; 503 when Apple failed; 502 when Apple's answer did not verify.
    @Sendable func refreshAccount(_ request: Request, context: StoreGateRequestContext) async throws -> Response {
        let account = try Self.account(try Self.pathParameter("account", context), field: "account")
        guard let refresher = appStore?.refresher else {
            throw APIError(.conflict, .appstoreNotConfigured, "refreshing needs App Store Server API credentials (STOREGATE_APPSTORE_*) and STOREGATE_SYNC on")
        }
        do throws(AccountRefreshError) {
            return JSONReply.response(RefreshReply(report: try await refresher.refresh(account)))
        } catch {
            var reply: APIError
            switch error.code {
            case .rateLimited: reply = APIError(.tooManyRequests, APIErrorCode(error.code), error.reason)
            case .appleUnavailable: reply = APIError(.serviceUnavailable, APIErrorCode(error.code), error.reason)
            case .rejected: reply = APIError(.badGateway, APIErrorCode(error.code), error.reason)
            case .ledger: reply = APIError(.serviceUnavailable, APIErrorCode(error.code), error.reason)
            default: reply = APIError(.serviceUnavailable, .internalError, "the refresh failed; the failure was logged")
            }
            reply.isRetryable = error.code != .rejected
            if let retryAfter = error.retryAfter {
                reply.headers[.retryAfter] = String(max(1, Int(retryAfter.timeIntervalSince(now()).rounded(.up))))
            } else if error.code != .rejected {
                reply.headers[.retryAfter] = "1"
            }
            throw reply
        }
    }
}
