import Foundation
import Hummingbird
import Synchronization
public import StoreGateAppStoreClient
public import StoreGateCore

extension AppleStandIn {
    /// Why the stand-in refused a Send Consumption Information body, one case per constraint
    /// Apple documents for `ConsumptionRequest` (App Store Server API 1.19, the V2 endpoint
    /// `PUT /inApps/v2/transactions/consumption/{transactionId}`).
    ///
    /// The stand-in checks the JSON it receives on its own, from Apple's documentation, not
    /// with the client's checks, so a request the client lets through and Apple would refuse
    /// fails a test.
    public enum ConsumptionRefusal: String, Sendable, Hashable, CaseIterable {
        /// The body is not a JSON object (Apple: 400 without an error code, "malformed").
        case malformed
        /// `customerConsented` is missing or not `true` (`InvalidCustomerConsentedError`).
        case invalidCustomerConsented
        /// `deliveryStatus` is missing or not one of Apple's five values (`InvalidDeliveryStatusError`).
        case invalidDeliveryStatus
        /// `sampleContentProvided` is missing or not a Boolean (`InvalidSampleContentProvidedError`).
        case invalidSampleContentProvided
        /// `refundPreference` is not `DECLINE`, `GRANT_FULL` or `GRANT_PRORATED` (`InvalidRefundPreferenceError`).
        case invalidRefundPreference
        /// `consumptionPercentage` is not an integer 0...100000 (`ConsumptionPercentageOutOfRangeError`).
        case consumptionPercentageOutOfRange
        /// A `deliveryStatus` other than `DELIVERED` with a `consumptionPercentage` other than 0
        /// (`UndeliveredConsumptionPercentageNonZeroError`).
        case undeliveredConsumptionPercentageNonZero
        /// A `consumptionPercentage` for an auto-renewable subscription
        /// (`ConsumptionPercentageAutoRenewableSubscriptionError`).
        case consumptionPercentageAutoRenewableSubscription
        /// `GRANT_PRORATED` for a product other than an auto-renewable subscription without a
        /// `consumptionPercentage` above 0 and below 100000 (documented on `consumptionPercentage`;
        /// Apple names no error object for it).
        case grantProratedWithoutPartialPercentage

        /// Apple's `errorCode` for the refusal, when its documentation gives the number;
        /// `nil`: answered 400 without an error code (the numbers of
        /// `ConsumptionPercentageOutOfRangeError` and `UndeliveredConsumptionPercentageNonZeroError`
        /// were not at hand when this was written).
        public var errorCode: AppStoreAPIErrorCode? {
            switch self {
            case .invalidCustomerConsented: .invalidCustomerConsented
            case .invalidDeliveryStatus: .invalidDeliveryStatus
            case .invalidSampleContentProvided: .invalidSampleContentProvided
            case .invalidRefundPreference: AppStoreAPIErrorCode(rawValue: 4_000_044)
            case .consumptionPercentageAutoRenewableSubscription: AppStoreAPIErrorCode(rawValue: 4_000_209)
            case .malformed, .consumptionPercentageOutOfRange, .undeliveredConsumptionPercentageNonZero, .grantProratedWithoutPartialPercentage: nil
            }
        }
    }

    /// One Send Consumption Information the stand-in refused.
    public struct ConsumptionRefusalCall: Sendable, Hashable {
        /// The transaction in the path.
        public let transactionId: String
        /// Why.
        public let refusal: ConsumptionRefusal
        /// The JSON body.
        public let body: [UInt8]
    }

    /// Every Send Consumption Information refused, in order.
    public var consumptionRefusals: [ConsumptionRefusalCall] { state.withLock { $0.consumptionRefusals } }

    /// What Apple would refuse in a Send Consumption Information body, `nil` when it takes it.
    ///
    /// - Parameters:
    ///   - body: The JSON body.
    ///   - productType: The type of the transaction (Apple's `type`), when known; a transaction
    ///     the stand-in knows nothing of is taken as a product other than an auto-renewable
    ///     subscription.
    public static func consumptionRefusal(body: [UInt8], productType: ProductType?) -> ConsumptionRefusal? {
        let request: ConsumptionRequestBody
        do {
            request = try JSONDecoder().decode(ConsumptionRequestBody.self, from: Data(body))
        } catch {
            return .malformed
        }
        guard case .value(true) = request.customerConsented else { return .invalidCustomerConsented }
        guard case .value(let delivery) = request.deliveryStatus, ConsumptionInformation.DeliveryStatus(rawValue: delivery) != nil else {
            return .invalidDeliveryStatus
        }
        guard case .value = request.sampleContentProvided else { return .invalidSampleContentProvided }
        var preference: ConsumptionInformation.RefundPreference?
        switch request.refundPreference {
        case .absent: break
        case .invalid: return .invalidRefundPreference
        case .value(let text):
            guard let known = ConsumptionInformation.RefundPreference(rawValue: text) else { return .invalidRefundPreference }
            preference = known
        }
        var percentage: Int?
        switch request.consumptionPercentage {
        case .absent: break
        case .invalid: return .consumptionPercentageOutOfRange
        case .value(let value):
            guard (0...100_000).contains(value) else { return .consumptionPercentageOutOfRange }
            percentage = value
        }
        if let percentage, delivery != ConsumptionInformation.DeliveryStatus.delivered.rawValue, percentage != 0 {
            return .undeliveredConsumptionPercentageNonZero
        }
        let isAutoRenewable = productType == .autoRenewable
        if isAutoRenewable, percentage != nil { return .consumptionPercentageAutoRenewableSubscription }
        if preference == .grantProrated, !isAutoRenewable {
            guard let percentage, percentage > 0, percentage < 100_000 else { return .grantProratedWithoutPartialPercentage }
        }
        return nil
    }

    /// Answers Send Consumption Information as Apple does: 202, or 400 with the refusal.
    func answerConsumption(_ body: [UInt8], transactionId: String, data: ServerAPIData, environment: AppStoreEnvironment) -> Response {
        if let refusal = Self.consumptionRefusal(body: body, productType: Self.productType(of: transactionId, in: data)) {
            state.withLock { $0.consumptionRefusals.append(ConsumptionRefusalCall(transactionId: transactionId, refusal: refusal, body: body)) }
            guard let code = refusal.errorCode else { return Response(status: .badRequest) }
            return Self.response(for: .apiError(code, httpStatus: 400))
        }
        state.withLock { $0.consumptionRequests.append(ConsumptionCall(environment: environment, transactionId: transactionId, body: body)) }
        return Response(status: .accepted)
    }

    /// The type of a transaction the stand-in holds signed data for: Get Transaction Info,
    /// the histories, orders, refunds, or a notification's transaction.
    static func productType(of transactionId: String, in data: ServerAPIData) -> ProductType? {
        var signed: [String] = data.transactions[transactionId].map { [$0] } ?? []
        signed += data.history.values.joined()
        signed += data.orders.values.joined()
        signed += data.refunds.values.joined()
        for transaction in signed {
            guard let payload = payload(of: transaction), payload["transactionId"] as? String == transactionId else { continue }
            return (payload["type"] as? String).map(ProductType.init(rawValue:))
        }
        for notification in data.notifications {
            guard let inner = (payload(of: notification)?["data"] as? [String: Any])?["signedTransactionInfo"] as? String,
                  let payload = payload(of: inner), payload["transactionId"] as? String == transactionId
            else { continue }
            return (payload["type"] as? String).map(ProductType.init(rawValue:))
        }
        return nil
    }

    /// The JSON payload of a compact JWS the stand-in minted itself.
    private static func payload(of compactJWS: String) -> [String: Any]? {
        let parts = compactJWS.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let bytes = Base64.decode(parts[1], mode: .url) else { return nil }
        do {
            return try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
        } catch {
            return nil
        }
    }
}

/// A Send Consumption Information body with each field read strictly: absent, of the wrong
/// JSON type, or a value (`1` is not `true`, `1.5` not an integer).
private struct ConsumptionRequestBody: Decodable {
    enum Field<Value> {
        case absent
        case invalid
        case value(Value)
    }

    enum Key: String, CodingKey {
        case customerConsented, deliveryStatus, sampleContentProvided, refundPreference, consumptionPercentage
    }

    let customerConsented: Field<Bool>
    let deliveryStatus: Field<String>
    let sampleContentProvided: Field<Bool>
    let refundPreference: Field<String>
    let consumptionPercentage: Field<Int>

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        customerConsented = Self.read(container, .customerConsented)
        deliveryStatus = Self.read(container, .deliveryStatus)
        sampleContentProvided = Self.read(container, .sampleContentProvided)
        refundPreference = Self.read(container, .refundPreference)
        consumptionPercentage = Self.read(container, .consumptionPercentage)
    }

    private static func read<Value: Decodable>(_ container: KeyedDecodingContainer<Key>, _ key: Key) -> Field<Value> {
        guard container.contains(key) else { return .absent }
        do {
            return .value(try container.decode(Value.self, forKey: key))
        } catch {
            return .invalid
        }
    }
}
