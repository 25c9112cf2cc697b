public import StoreGateCore
import StoreGateReceipt

/// What the offline verification of a receipt established, as plain values: the input of the
/// agreement check. Build it from StoreGate's offline verdict (``init(proof:)``) or from
/// another verifier's result.
public struct OfflineReceiptFacts: Sendable, Hashable, Codable {
    /// One purchase of the receipt.
    public struct Purchase: Sendable, Hashable, Codable {
        /// The transaction id.
        public var transactionId: String
        /// The product id.
        public var productId: String
        /// How many items were bought.
        public var quantity: Int

        /// Creates a value from its parts.
        public init(transactionId: String, productId: String, quantity: Int) {
            self.transactionId = transactionId
            self.productId = productId
            self.quantity = quantity
        }
    }

    /// The bundle id Apple names.
    public var bundleId: String
    /// The environment the offline verdict reports (``AppStoreEnvironment/test`` or ``AppStoreEnvironment/xcode``
    /// for receipts anchored in an opt-in root: those never agree with Apple).
    public var environment: AppStoreEnvironment
    /// Every purchase the receipt holds.
    public var purchases: [Purchase]

    /// Creates a value from its parts.
    public init(bundleId: String, environment: AppStoreEnvironment, purchases: [Purchase]) {
        self.bundleId = bundleId
        self.environment = environment
        self.purchases = purchases
    }

    /// The facts of a verified app receipt.
    public init(proof: VerifiedProof) {
        self.init(
            bundleId: proof.bundleId,
            environment: proof.environment,
            purchases: proof.transactions.map { Purchase(transactionId: $0.transactionId, productId: $0.productId, quantity: $0.quantity) }
        )
    }
}

/// Whether the offline verification of a receipt and Apple's verifyReceipt reply describe the
/// same receipt: the same app, the same environment, the same purchases.
///
/// The reply's `receipt` is Apple's decoding of the very bytes verified offline, so its
/// purchases must be exactly the offline ones (`latest_receipt_info` may add newer renewals,
/// which are not differences). Any difference is listed; ``requireAgreement()`` turns a
/// disagreement into ``AppStoreClientError/Code/offlineDisagreement``.
public struct ReceiptAgreement: Sendable, Hashable, Codable {
    /// One way the two verdicts differ.
    public enum Difference: Sendable, Hashable, Codable, CustomStringConvertible {
        case bundleId(offline: String, remote: String?)
        case environment(offline: AppStoreEnvironment, remote: AppStoreEnvironment)
        /// A purchase verified offline that Apple's reply does not list.
        case missingRemotely(transactionId: String)
        /// A purchase in Apple's decoding of the receipt that the offline verdict does not have.
        case missingOffline(transactionId: String)
        case productId(transactionId: String, offline: String, remote: String?)
        case quantity(transactionId: String, offline: Int, remote: Int?)

        public var description: String {
            switch self {
            case .bundleId(let offline, let remote): return "bundle id: offline \(offline), Apple \(remote ?? "none")"
            case .environment(let offline, let remote): return "environment: offline \(offline), Apple \(remote)"
            case .missingRemotely(let id): return "transaction \(id) verified offline is absent from Apple's reply"
            case .missingOffline(let id): return "transaction \(id) in Apple's reply is absent from the offline verdict"
            case .productId(let id, let offline, let remote): return "transaction \(id) product: offline \(offline), Apple \(remote ?? "none")"
            case .quantity(let id, let offline, let remote): return "transaction \(id) quantity: offline \(offline), Apple \(remote.map(String.init) ?? "none")"
            }
        }
    }

    /// Every difference found; empty when the two agree.
    public let differences: [Difference]

    /// Whether the offline verdict and Apple's reply agree.
    public var agrees: Bool { differences.isEmpty }

    /// Compares the offline facts with an accepted reply.
    public init(offline: OfflineReceiptFacts, remote: AcceptedVerifyReceiptReply) {
        self.init(offline: offline, reply: remote.reply, answeredBy: remote.environment)
    }

    /// Compares the offline facts with a reply given by the endpoint of `answeredBy`.
    public init(offline: OfflineReceiptFacts, reply: VerifyReceiptResponse, answeredBy: AppStoreEnvironment) {
        var differences: [Difference] = []
        let receipt = reply.receipt
        if receipt?.bundleId != offline.bundleId {
            differences.append(.bundleId(offline: offline.bundleId, remote: receipt?.bundleId))
        }
        let remoteEnvironment = reply.environment ?? answeredBy
        if remoteEnvironment != offline.environment {
            differences.append(.environment(offline: offline.environment, remote: remoteEnvironment))
        }
        let decoded = receipt?.transactions ?? []
        let remoteAll = decoded + reply.latestReceiptInfo
        let offlineIds = Set(offline.purchases.map(\.transactionId))
        for purchase in offline.purchases {
            let entries = remoteAll.filter { $0.transactionId == purchase.transactionId }
            guard !entries.isEmpty else {
                differences.append(.missingRemotely(transactionId: purchase.transactionId))
                continue
            }
            if let entry = entries.first(where: { $0.productId != purchase.productId }) {
                differences.append(.productId(transactionId: purchase.transactionId, offline: purchase.productId, remote: entry.productId))
            }
            if let entry = entries.first(where: { $0.quantity != purchase.quantity }) {
                differences.append(.quantity(transactionId: purchase.transactionId, offline: purchase.quantity, remote: entry.quantity))
            }
        }
        var reported = Set<String>()
        for entry in decoded {
            let id = entry.transactionId ?? ""
            if !offlineIds.contains(id), reported.insert(id).inserted {
                differences.append(.missingOffline(transactionId: id))
            }
        }
        self.differences = differences
    }

    /// Throws unless the two verdicts agree.
    ///
    /// - Throws: ``AppStoreClientError/Code/offlineDisagreement`` listing every difference.
    public func requireAgreement() throws(AppStoreClientError) {
        guard agrees else {
            throw AppStoreClientError(
                .offlineDisagreement,
                reason: "offline verification and Apple's reply disagree: " + differences.map(\.description).joined(separator: "; ")
            )
        }
    }
}
