import Dispatch
import Foundation
import Hummingbird
import Logging
import StoreGateCore
import StoreGateEvents
import StoreGateLedger
import StoreGateSync
import StoreGateWorkers
import Tracing

/// What every handler needs: the configuration, the verifiers, the ledger, the metrics and
/// the clock. Each group of endpoints is an extension in its own file under `Routes/`.
struct Endpoints: Sendable {
    let configuration: ServerConfiguration
    let verification: ProofVerification
    let ledger: any Ledger
    /// The App Store Server API (account refresh, test notification); `nil` without credentials.
    let appStore: AppStoreAccess?
    let metrics: ServerMetrics
    /// Where the background workers report their rounds (readiness).
    let workers: WorkerRegistry
    /// The catalog entitlements are derived with (reloaded on SIGHUP).
    let catalog: CatalogStore
    let now: @Sendable () -> Date
    let openAPIDocument: [UInt8]?
    let logger: Logger
    /// The API keys, configured and ledger-stored.
    let keys: APIKeyAuthenticator
    /// The webhook deliverer (its address policy and test sends).
    let webhooks: WebhookDeliveryService

    /// Reads the body and decodes it, within the configured body limit.
    func decode<T: JSONRequestBody>(_ type: T.Type, _ request: Request) async throws(APIError) -> T {
        let body = try await JSONRequest.body(request, limit: configuration.maxBodyBytes)
        return try T(RequestJSONReader.object(body))
    }

    /// An account id from a request member or path segment.
    static func account(_ value: String, field: String) throws(APIError) -> AccountID {
        do throws(LedgerError) {
            return try AccountID(value)
        } catch {
            throw APIError.badField(field, APIErrorCode(.invalidAccount), error.reason)
        }
    }

    /// A percent-decoded path parameter.
    static func pathParameter(_ name: String, _ context: StoreGateRequestContext) throws(APIError) -> String {
        guard let raw = context.parameters.get(name), let decoded = PathSegment.decoded(raw) else {
            throw APIError.badField(name, .invalidPathParameter, "the path parameter '\(name)' is not valid percent-encoded text")
        }
        return decoded
    }

    /// Records a verified proof for an account, mapping ledger refusals to replies.
    func record(_ proof: VerifiedProof, for account: AccountID, context: StoreGateRequestContext) async throws(APIError) -> RecordOutcome {
        do throws(LedgerError) {
            return try await Traces.span(Traces.ledgerRecord) { span throws(LedgerError) in
                let outcome = try await ledger.record(proof, for: account)
                span.attributes["storegate.record.new_transactions"] = outcome.newTransactionIds.count
                span.attributes["storegate.record.updated_transactions"] = outcome.updatedTransactionIds.count
                context.logger.debug("recorded a proof", metadata: [
                    "new": "\(outcome.newTransactionIds.count)", "updated": "\(outcome.updatedTransactionIds.count)",
                    "unchanged": "\(outcome.unchangedTransactionIds.count)",
                ])
                return outcome
            }
        } catch {
            throw APIError.ledger(error, logger: context.logger)
        }
    }

    /// The account's holdings now.
    func entitlements(_ account: AccountID, context: StoreGateRequestContext) async throws(APIError) -> Entitlements {
        do throws(LedgerError) {
            return try await ledger.entitlements(for: account, at: now())
        } catch {
            throw APIError.ledger(error, logger: context.logger)
        }
    }

    /// The account's holdings and grants, read together (one round trip on PostgreSQL).
    func entitlementFacts(_ account: AccountID, context: StoreGateRequestContext) async throws(APIError) -> EntitlementFacts {
        do throws(LedgerError) {
            return try await ledger.entitlementFacts(for: account, at: now())
        } catch {
            throw APIError.ledger(error, logger: context.logger)
        }
    }

    /// Runs a verification and counts it by kind and outcome: `invalid` for a refused proof,
    /// `refused` when the ledger refused a genuine one, `error` for anything else.
    func measured<T>(_ kind: String, _ body: () async throws(APIError) -> T) async throws(APIError) -> T {
        let start = DispatchTime.now().uptimeNanoseconds
        do throws(APIError) {
            let value = try await body()
            metrics.verification(kind, .valid, nanoseconds: DispatchTime.now().uptimeNanoseconds &- start)
            return value
        } catch {
            let outcome: ServerMetrics.Outcome
            switch error.status {
            case .unprocessableContent, .unauthorized: outcome = .invalid
            case .conflict: outcome = .refused
            case .badRequest, .contentTooLarge: outcome = .invalid
            default: outcome = .error
            }
            metrics.verification(kind, outcome, nanoseconds: DispatchTime.now().uptimeNanoseconds &- start)
            throw error
        }
    }
}
