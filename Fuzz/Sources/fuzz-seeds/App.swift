import Crypto
import Foundation
import FuzzSupport
import StoreGateCore
@_spi(Fuzzing) import StoreGateLedger
@_spi(Fuzzing) import StoreGateReceipt
import StoreGateTestSupport

/// Writes the committed seed corpora (`Fuzz/Corpus/<target>/minted-*`) and the test CA roots
/// the verification targets trust (`Fuzz/TestCA/`), from a fresh pair of test certificate
/// authorities (RSA-2048 for receipts, P-256 for JWS) and the project's own minters.
///
/// Run by `Scripts/fuzz.sh seeds`. Every run makes new keys, so the roots and the seeds are
/// regenerated together; files not named `minted-*` (regression inputs) are left alone.
@main
enum App {
    static func main() throws {
        let fuzz = FuzzFiles.fuzzDirectory
        let receiptCA = try TestCertificateAuthority(keyKind: .rsa2048, shape: .init(label: "StoreGate Fuzz"))
        let jwsCA = try TestCertificateAuthority(keyKind: .p256, shape: .init(label: "StoreGate Fuzz"))
        var out = Output(fuzz: fuzz)

        // Trust anchors.
        try out.replace("TestCA", [
            ("receipt-root.der", receiptCA.root.der),
            ("jws-root.der", jwsCA.root.der),
        ], prefix: "")

        // Receipts: Apple's encoding quirks, both digests, signed attributes, many purchases.
        let receipts = try Self.receipts(ReceiptMinter(authority: receiptCA))
        try out.write("fuzz-receipt-verify", receipts.map { ($0.name + ".der", $0.der) })
        try out.write("fuzz-pkcs7", receipts.map { ($0.name + ".der", $0.der) })
        try out.write("fuzz-receipt-payload", receipts.map { ($0.name + ".payload", $0.payload) })

        // StoreKit 2 JWS of each kind.
        let minter = JWSMinter(authority: jwsCA)
        let transaction = try minter.mint(json: JWSPayloads.transaction())
        let consumable = try minter.mint(json: JWSPayloads.transaction(
            environment: "Production", transactionId: "2000000100000002", originalTransactionId: "2000000100000002",
            productId: "com.example.storegate.coins", type: "Consumable", quantity: 3))
        let renewal = try minter.mint(json: JWSPayloads.renewalInfo())
        let appTransaction = try minter.mint(json: JWSPayloads.appTransaction(appAppleId: 1_234_567_890))
        let notification = try minter.mint(json: JWSPayloads.notification(
            subtype: "BILLING_RECOVERY", appAppleId: 1_234_567_890, signedTransactionInfo: transaction, signedRenewalInfo: renewal))
        let test = try minter.mint(json: JWSPayloads.notification(type: "TEST"))
        let jws: [(String, [UInt8])] = [
            ("transaction.jws", transaction), ("consumable.jws", consumable), ("renewal-info.jws", renewal),
            ("app-transaction.jws", appTransaction), ("notification.jws", notification), ("test-notification.jws", test),
        ].map { ($0.0, Array($0.1.utf8)) }

        // Request bodies of the service.
        let receiptBase64 = Base64.encode(receipts[0].der)
        try out.write("fuzz-request-json", try [
            ("receipt.json", ["receipt": receiptBase64, "account": "alice",
                              "expectations": ["appVersion": "1", "productId": "com.example.coins", "transactionId": "1000000000000001"]]),
            ("transaction.json", ["signedTransaction": transaction, "signedRenewalInfo": renewal, "account": "alice",
                                  "expectations": ["productId": "com.example.storegate.monthly", "transactionId": "2000000100000001"]]),
            ("notification.json", ["signedPayload": notification]),
            ("consume.json", ["quantity": 2, "idempotencyKey": "order-17"]),
            ("verifyreceipt.json", ["receipt-data": receiptBase64, "password": "shared-secret", "exclude-old-transactions": true]),
        ].map { ($0.0, try Self.json($0.1)) })

        // verifyReceipt replies (Apple's spellings: ids and dates as strings, booleans as text).
        try out.write("fuzz-verifyreceipt-reply", try [
            ("status-0.json", Self.verifyReceiptReply(status: 0, latestAsArray: true)),
            ("status-0-ios6.json", Self.verifyReceiptReply(status: 0, latestAsArray: false)),
            ("status-21007.json", ["status": 21007]),
            ("status-21100.json", ["status": 21100, "is-retryable": true]),
        ].map { ($0.0, try Self.json($0.1)) })

        // App Store Server API answers carrying minted JWS.
        let attempts: [[String: Any]] = [["attemptDate": 1_700_000_000_000, "sendAttemptResult": "SUCCESS"]]
        try out.write("fuzz-server-api", try [
            ("transaction-info.json", ["signedTransactionInfo": transaction]),
            ("history.json", ["revision": "r1", "hasMore": false, "bundleId": "com.example.storegate", "appAppleId": 1_234_567_890,
                              "environment": "Sandbox", "signedTransactions": [transaction, consumable]]),
            ("statuses.json", ["environment": "Sandbox", "bundleId": "com.example.storegate", "appAppleId": 1_234_567_890,
                               "data": [["subscriptionGroupIdentifier": "21000000",
                                         "lastTransactions": [["status": 1, "originalTransactionId": "2000000100000001",
                                                               "signedTransactionInfo": transaction, "signedRenewalInfo": renewal]]]]]),
            ("order-lookup.json", ["status": 0, "signedTransactions": [transaction]]),
            ("refund-history.json", ["signedTransactions": [consumable], "revision": "r2", "hasMore": false]),
            ("notification-history.json", ["paginationToken": "p1", "hasMore": false,
                                           "notificationHistory": [["signedPayload": notification, "sendAttempts": attempts]]]),
            ("test-notification.json", ["testNotificationToken": "fuzz-token"]),
            ("test-notification-status.json", ["signedPayload": test, "sendAttempts": attempts]),
            ("error.json", ["errorCode": 4_040_010, "errorMessage": "Transaction id not found."]),
        ].map { ($0.0, try Self.json($0.1)) })

        // The answers of the endpoints issue 33 added (fuzz-server-api-actions): an app
        // transaction, the renewal date extensions, Apple's error bodies (retryable or not).
        try out.write("fuzz-server-api-actions", try [
            ("app-transaction-info.json", ["signedAppTransactionInfo": appTransaction]),
            ("extend.json", ["originalTransactionId": "2000000100000001", "webOrderLineItemId": "2000000010000001", "success": true,
                             "effectiveDate": 1_700_604_800_000]),
            ("extend-refused.json", ["originalTransactionId": "2000000100000001", "success": false]),
            ("mass-extend.json", ["requestIdentifier": "fuzz-mass-1"]),
            ("mass-status.json", ["requestIdentifier": "fuzz-mass-1", "complete": true, "completeDate": 1_700_000_000_000,
                                  "succeededCount": 30, "failedCount": 2]),
            ("mass-status-pending.json", ["requestIdentifier": "fuzz-mass-1", "complete": false]),
            ("error-4000187.json", ["errorCode": 4_000_187, "errorMessage": "Invalid request. The transaction id parameter must represent an original transaction."]),
            ("error-5000000.json", ["errorCode": 5_000_000, "errorMessage": "An unknown error occurred."]),
            ("error-5000001.json", ["errorCode": 5_000_001, "errorMessage": "An unknown error occurred. Please try again."]),
        ].map { ($0.0, try Self.json($0.1)) })

        // Signed payloads with API 1.21's members and members no model has yet (kept and
        // written back as they came).
        var committed = JWSPayloads.transaction()
        committed["billingPlanType"] = "MONTHLY"
        committed["commitmentInfo"] = ["billingPeriodNumber": 2, "commitmentExpiresDate": 1_731_536_000_000, "commitmentPrice": 119_880,
                                       "totalBillingPeriods": 12, "futureMember": [1, 2.5, "x"]] as [String: Any]
        committed["advancedCommerceInfo"] = ["taxCode": "C003-00-1", "items": [["SKU": "a", "price": 1000] as [String: Any]]] as [String: Any]
        var committedRenewal = JWSPayloads.renewalInfo()
        committedRenewal["renewalBillingPlanType"] = "BILLED_UPFRONT"
        committedRenewal["commitmentInfo"] = ["commitmentAutoRenewProductId": "com.example.storegate.annual", "commitmentAutoRenewStatus": 1,
                                              "commitmentRenewalBillingPlanType": "MONTHLY", "commitmentRenewalDate": 1_731_536_000_000,
                                              "commitmentRenewalPrice": 9990] as [String: Any]
        committedRenewal["someFutureMember"] = ["nested": [true, NSNull()]] as [String: Any]
        let forward: [(String, [UInt8])] = [
            ("transaction-commitment.jws", Array(try minter.mint(json: committed).utf8)),
            ("renewal-commitment.jws", Array(try minter.mint(json: committedRenewal).utf8)),
        ]
        try out.write("fuzz-jws-verify", jws + forward)
        try out.write("fuzz-jws-structure", jws + forward)

        // Trust-directory files.
        try out.write("fuzz-trust-file", [
            ("receipt-root.der", receiptCA.root.der),
            ("jws-root.der", jwsCA.root.der),
            ("jws-root.pem", Array(Self.pem(jwsCA.root.der).utf8)),
            ("receipt-intermediate.pem", Array(Self.pem(receiptCA.intermediate.der).utf8)),
        ])

        // Stored proofs: [key id length][key id][digest][sealed], sealed with the target's key.
        let encryption = try ProofEncryption(currentKeyID: "fuzz", keys: [
            "fuzz": SymmetricKey(data: [UInt8](repeating: 0x42, count: 32)),
            "old": SymmetricKey(data: [UInt8](repeating: 0x17, count: 32)),
        ])
        var stored: [(String, [UInt8])] = []
        for (name, proof) in [("receipt", receipts[0].der), ("jws", Array(transaction.utf8))] {
            let sealed = try StoredProofFuzzing.seal(proof, with: encryption)
            stored.append(("\(name).row", [UInt8(sealed.keyID.utf8.count)] + Array(sealed.keyID.utf8) + ProofDigest(of: proof).bytes + sealed.combined))
        }
        stored.append(("keys.txt", Array("fuzz=\(Base64.encode([UInt8](repeating: 0x42, count: 32))),old=\(Base64.encode([UInt8](repeating: 0x17, count: 32)))".utf8)))
        try out.write("fuzz-stored-proof", stored)

        // Queued rollup changes (schema 17), as writes encode them.
        try out.write("fuzz-rollup-changes", RollupChangesFuzzing.samples().map { ($0.name + ".bin", $0.bytes) })

        print("wrote \(out.count) seed files under \(fuzz.path)")
    }

    struct MintedReceipt {
        let name: String
        let der: [UInt8]
        let payload: [UInt8]
    }

    static func receipts(_ minter: ReceiptMinter) throws -> [MintedReceipt] {
        let day: TimeInterval = 86_400
        let base = Date(timeIntervalSince1970: 1_700_000_000)
        var simple = ReceiptMinter.Payload()
        simple.purchases = [
            .init(productId: "com.example.coins", transactionId: "1000000000000001", purchaseDate: base - day, quantity: 5),
            .init(productId: "com.example.pro", transactionId: "1000000000000002", purchaseDate: base - 2 * day),
        ]
        var subscriptions = ReceiptMinter.Payload()
        subscriptions.receiptType = "Production"
        subscriptions.expirationDate = base + 30 * day
        subscriptions.purchases = (0..<12).map { index in
            let start = base - Double(12 - index) * 30 * day
            return .init(
                productId: "com.example.monthly", transactionId: "20000000000000\(10 + index)", purchaseDate: start,
                originalTransactionId: "2000000000000010", originalPurchaseDate: base - 360 * day,
                subscriptionExpirationDate: start + 30 * day, webOrderLineItemId: 3_000_000_000 + Int64(index),
                cancellationDate: index == 11 ? start + day : nil, isTrialPeriod: index == 0, isInIntroOfferPeriod: index < 2,
                promotionalOfferId: index == 5 ? "winback" : nil)
        }
        subscriptions.extraAttributes = [.init(type: 25, value: [0x02, 0x01, 0x01]), .init(type: 1234, version: 2, value: [0x0C, 0x02, 0x68, 0x69])]
        var xcode = simple
        xcode.receiptType = nil
        xcode.dateStyle = .offset(3600)
        var empty = ReceiptMinter.Payload()
        empty.purchases = []

        var sha1 = ReceiptMinter.Options()
        sha1.digest = .sha1
        var quirks = ReceiptMinter.Options()
        quirks.indefiniteLengths = true
        quirks.contentChunkSize = 256
        quirks.unsortedCertificates = true
        var attributes = ReceiptMinter.Options()
        attributes.signedAttributes = true
        attributes.bareRSAEncryption = false

        let cases: [(String, ReceiptMinter.Payload, ReceiptMinter.Options)] = [
            ("receipt-sha256", simple, ReceiptMinter.Options()),
            ("receipt-sha1", simple, sha1),
            ("receipt-ber-quirks", subscriptions, quirks),
            ("receipt-signed-attributes", simple, attributes),
            ("receipt-subscriptions", subscriptions, ReceiptMinter.Options()),
            ("receipt-xcode-dates", xcode, sha1),
            ("receipt-no-purchases", empty, ReceiptMinter.Options()),
        ]
        return try cases.map { name, payload, options in
            MintedReceipt(name: name, der: try minter.mint(payload, options: options), payload: ReceiptMinter.payloadDER(payload))
        }
    }

    static func verifyReceiptReply(status: Int, latestAsArray: Bool) -> [String: Any] {
        let purchase: [String: Any] = [
            "quantity": "1", "product_id": "com.example.monthly", "transaction_id": "2000000000000021",
            "original_transaction_id": "2000000000000010", "purchase_date": "2023-11-14 22:13:20 Etc/GMT",
            "purchase_date_ms": "1700000000000", "purchase_date_pst": "2023-11-14 14:13:20 America/Los_Angeles",
            "expires_date": "2023-12-14 22:13:20 Etc/GMT", "expires_date_ms": "1702592000000",
            "web_order_line_item_id": "3000000011", "is_trial_period": "false", "is_in_intro_offer_period": "false",
            "in_app_ownership_type": "PURCHASED", "subscription_group_identifier": "21000000",
        ]
        let consumable: [String: Any] = [
            "quantity": 5, "product_id": "com.example.coins", "transaction_id": 1_000_000_000_000_001,
            "original_transaction_id": "1000000000000001", "purchase_date_ms": 1_699_913_600_000, "is_trial_period": "0",
            "cancellation_date_ms": "1699950000000.5", "cancellation_reason": "0",
        ]
        return [
            "status": status,
            "environment": "Sandbox",
            "receipt": [
                "receipt_type": "ProductionSandbox", "adam_id": 0, "app_item_id": 0, "bundle_id": "com.example.app",
                "application_version": "1", "download_id": 0, "version_external_identifier": 0,
                "receipt_creation_date": "2023-11-14 22:13:20 Etc/GMT", "receipt_creation_date_ms": "1700000000000",
                "request_date_ms": "1700000001000", "original_purchase_date_ms": "1375340400000",
                "original_application_version": "1.0", "in_app": [purchase, consumable],
            ],
            "latest_receipt_info": latestAsArray ? [purchase] as Any : purchase as Any,
            "pending_renewal_info": [[
                "auto_renew_product_id": "com.example.monthly", "original_transaction_id": "2000000000000010",
                "product_id": "com.example.monthly", "auto_renew_status": "1", "is_in_billing_retry_period": "0",
                "grace_period_expires_date_ms": "1702600000000",
            ]],
            "latest_receipt": "MIIT",
        ]
    }

    static func json(_ object: [String: Any]) throws -> [UInt8] {
        Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
    }

    static func pem(_ der: [UInt8]) -> String {
        let base64 = Base64.encode(der)
        var lines = ["-----BEGIN CERTIFICATE-----"]
        var index = base64.startIndex
        while index < base64.endIndex {
            let end = base64.index(index, offsetBy: 64, limitedBy: base64.endIndex) ?? base64.endIndex
            lines.append(String(base64[index..<end]))
            index = end
        }
        lines.append("-----END CERTIFICATE-----")
        return lines.joined(separator: "\n") + "\n"
    }

    /// Writes seed files, replacing the previous generation's `minted-*` files.
    struct Output {
        let fuzz: URL
        var count = 0

        mutating func write(_ target: String, _ files: [(String, [UInt8])]) throws {
            try replace("Corpus/" + target, files, prefix: "minted-")
        }

        mutating func replace(_ directory: String, _ files: [(String, [UInt8])], prefix: String) throws {
            let url = fuzz.appendingPathComponent(directory)
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            for name in try FileManager.default.contentsOfDirectory(atPath: url.path) where name.hasPrefix(prefix) && (prefix.isEmpty ? name.hasSuffix(".der") : true) {
                try FileManager.default.removeItem(at: url.appendingPathComponent(name))
            }
            for (name, bytes) in files {
                try Data(bytes).write(to: url.appendingPathComponent(prefix + name))
                count += 1
            }
        }
    }
}
