import Foundation
import Hummingbird
import StoreGateCore
import StoreGateLedger
import StoreGateReceipt

/// `POST /v1/receipts/verify` (`ReceiptVerifyRequest` in the OpenAPI document).
struct ReceiptVerifyRequest: JSONRequestBody {
    /// What the caller expects beyond the configured app.
    struct Expectations {
        let appVersion: String?
        let deviceId: String?
        let productId: String?
        let transactionId: String?

        init(_ object: RequestObject) throws(APIError) {
            try object.rejectUnknownMembers(["appVersion", "deviceId", "productId", "transactionId"])
            appVersion = try object.optionalString("appVersion")
            deviceId = try object.optionalString("deviceId")
            productId = try object.optionalString("productId")
            transactionId = try object.optionalString("transactionId")
        }
    }

    let receipt: String
    let account: String
    let expectations: Expectations?

    init(_ object: RequestObject) throws(APIError) {
        try object.rejectUnknownMembers(["receipt", "account", "expectations"])
        receipt = try object.string("receipt")
        account = try object.string("account")
        expectations = try object.optionalObject("expectations").map { object throws(APIError) in try Expectations(object) }
    }
}

/// The reply of `POST /v1/receipts/verify` (`ReceiptVerifyReply`).
struct ReceiptVerifyReply: JSONWritable {
    let verdict = "valid"
    let kind = ProofKind.appReceipt.rawValue
    let environment: String
    let bundleId: String
    let account: String
    /// The decoded receipt, in the shape of Apple's verifyReceipt `receipt` object.
    let receipt: VerifyReceiptReceipt
    let checks: [ExpectationCheck]
    let recorded: RecordedReply
    let entitlements: EntitlementsReply

    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("verdict", verdict)
            json.member("kind", kind)
            json.member("environment", environment)
            json.member("bundleId", bundleId)
            json.member("account", account)
            json.member("receipt", receipt)
            json.member("checks", checks)
            json.member("recorded", recorded)
            json.member("entitlements", entitlements)
        }
    }
}

extension Endpoints {
    /// Verifies an app receipt offline, records its purchases for the account, and answers the
    /// verdict, the decoded receipt and the account's entitlements.
    @Sendable func verifyReceipt(_ request: Request, context: StoreGateRequestContext) async throws -> Response {
        let input = try await decode(ReceiptVerifyRequest.self, request)
        let account = try Self.account(input.account, field: "account")
        let expectations = try Self.receiptExpectations(input.expectations)
        let (verified, outcome) = try await measured(ProofKind.appReceipt.rawValue) { () throws(APIError) in
            let verified = try await verification.verifyReceipt(base64: input.receipt, expectations)
            return (verified, try await record(verified.proof, for: account, context: context))
        }
        let entitlements = try await entitlements(account, context: context)
        return JSONReply.response(ReceiptVerifyReply(
            environment: verified.environment.rawValue,
            bundleId: verified.receipt.bundleId,
            account: account.rawValue,
            receipt: VerifyReceiptReceipt(verified.receipt),
            checks: verified.checks,
            recorded: RecordedReply(outcome),
            entitlements: try await entitlementsReply(entitlements, context: context)
        ))
    }

    static func receiptExpectations(_ body: ReceiptVerifyRequest.Expectations?) throws(APIError) -> ProofVerification.ReceiptRequest {
        guard let body else { return ProofVerification.ReceiptRequest() }
        var expectations = ProofVerification.ReceiptRequest(appVersion: body.appVersion, productId: body.productId, transactionId: body.transactionId)
        if let deviceId = body.deviceId {
            guard let device = deviceIdentifier(deviceId) else {
                throw APIError.badField(
                    "expectations.deviceId", .invalidField,
                    "'expectations.deviceId' must be an identifierForVendor UUID or a 6-byte MAC address in hex"
                )
            }
            expectations.device = device
        }
        return expectations
    }

    /// An identifierForVendor UUID (iOS) or a MAC address (macOS: 12 hex digits, `:` or `-` allowed).
    static func deviceIdentifier(_ text: String) -> DeviceIdentifier? {
        if let uuid = UUID(uuidString: text) {
            return .identifierForVendor(uuid)
        }
        let hex = text.filter { $0 != ":" && $0 != "-" }
        guard hex.count == 12 else { return nil }
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return .macAddress(bytes)
    }
}

extension Endpoints {
    /// Verification of proofs the app sends.
    var verificationRoutes: [Route] {
        [
            Route(.post, "/v1/receipts/verify", .apiKey(.receiptsVerify), verifyReceipt),
            Route(.post, "/v1/transactions/verify", .apiKey(.transactionsVerify), verifyTransaction),
        ]
    }
}
