import Foundation
import Hummingbird
import StoreGateCore
import StoreGateLedger
import StoreGateSignedData

/// `POST /v1/transactions/verify` (`TransactionVerifyRequest` in the OpenAPI document).
struct TransactionVerifyRequest: JSONRequestBody {
    /// What the caller expects of the transaction.
    struct Expectations {
        let productId: String?
        let transactionId: String?

        init(_ object: RequestObject) throws(APIError) {
            try object.rejectUnknownMembers(["productId", "transactionId"])
            productId = try object.optionalString("productId")
            transactionId = try object.optionalString("transactionId")
        }
    }

    let signedTransaction: String
    let signedRenewalInfo: String?
    let account: String
    let expectations: Expectations?

    init(_ object: RequestObject) throws(APIError) {
        try object.rejectUnknownMembers(["signedTransaction", "signedRenewalInfo", "account", "expectations"])
        signedTransaction = try object.string("signedTransaction")
        signedRenewalInfo = try object.optionalString("signedRenewalInfo")
        account = try object.string("account")
        expectations = try object.optionalObject("expectations").map { object throws(APIError) in try Expectations(object) }
    }
}

/// The reply of `POST /v1/transactions/verify` (`TransactionVerifyReply`).
struct TransactionVerifyReply: JSONWritable {
    let verdict = "valid"
    let kind = ProofKind.signedTransaction.rawValue
    let environment: String
    let bundleId: String
    let account: String
    /// Apple's `JWSTransactionDecodedPayload`, dates in milliseconds as Apple writes them.
    let transaction: JWSTransactionDecodedPayload
    /// Apple's `JWSRenewalInfoDecodedPayload`, when one was sent.
    let renewalInfo: JWSRenewalInfoDecodedPayload?
    let recorded: RecordedReply
    let entitlements: EntitlementsReply

    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("verdict", verdict)
            json.member("kind", kind)
            json.member("environment", environment)
            json.member("bundleId", bundleId)
            json.member("account", account)
            json.key("transaction")
            json.raw(JSONReply.encoded(transaction))
            if let renewalInfo {
                json.key("renewalInfo")
                json.raw(JSONReply.encoded(renewalInfo))
            }
            json.member("recorded", recorded)
            json.member("entitlements", entitlements)
        }
    }
}

extension Endpoints {
    /// Verifies a StoreKit 2 signed transaction (and renewal info) offline, records it for the
    /// account, and answers the verdict, the decoded payload and the account's entitlements.
    @Sendable func verifyTransaction(_ request: Request, context: StoreGateRequestContext) async throws -> Response {
        let input = try await decode(TransactionVerifyRequest.self, request)
        let account = try Self.account(input.account, field: "account")
        let (verified, outcome) = try await measured(ProofKind.signedTransaction.rawValue) { () throws(APIError) in
            let verified = try await verification.verifyTransaction(
                input.signedTransaction, renewalInfo: input.signedRenewalInfo,
                productId: input.expectations?.productId, transactionId: input.expectations?.transactionId)
            return (verified, try await record(verified.proof, for: account, context: context))
        }
        let entitlements = try await entitlements(account, context: context)
        return JSONReply.response(TransactionVerifyReply(
            environment: verified.environment.rawValue,
            bundleId: verified.payload.bundleId ?? "",
            account: account.rawValue,
            transaction: verified.payload,
            renewalInfo: verified.renewalInfo?.payload,
            recorded: RecordedReply(outcome),
            entitlements: try await entitlementsReply(entitlements, context: context)
        ))
    }
}
