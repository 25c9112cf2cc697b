/// The type of an App Store Server Notification V2.
///
/// Apple's `notificationType`. Unknown values are kept as their raw value, never dropped.
public struct NotificationTypeV2: AppleEnumeration {
    /// The value as Apple writes it.
    public let rawValue: String

    /// Wraps a value, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// `SUBSCRIBED`.
    public static let subscribed = NotificationTypeV2(rawValue: "SUBSCRIBED")

    /// `DID_CHANGE_RENEWAL_PREF`.
    public static let didChangeRenewalPref = NotificationTypeV2(rawValue: "DID_CHANGE_RENEWAL_PREF")

    /// `DID_CHANGE_RENEWAL_STATUS`.
    public static let didChangeRenewalStatus = NotificationTypeV2(rawValue: "DID_CHANGE_RENEWAL_STATUS")

    /// `OFFER_REDEEMED`.
    public static let offerRedeemed = NotificationTypeV2(rawValue: "OFFER_REDEEMED")

    /// `DID_RENEW`.
    public static let didRenew = NotificationTypeV2(rawValue: "DID_RENEW")

    /// `EXPIRED`.
    public static let expired = NotificationTypeV2(rawValue: "EXPIRED")

    /// `DID_FAIL_TO_RENEW`.
    public static let didFailToRenew = NotificationTypeV2(rawValue: "DID_FAIL_TO_RENEW")

    /// `GRACE_PERIOD_EXPIRED`.
    public static let gracePeriodExpired = NotificationTypeV2(rawValue: "GRACE_PERIOD_EXPIRED")

    /// `PRICE_INCREASE`.
    public static let priceIncrease = NotificationTypeV2(rawValue: "PRICE_INCREASE")

    /// `REFUND`.
    public static let refund = NotificationTypeV2(rawValue: "REFUND")

    /// `REFUND_DECLINED`.
    public static let refundDeclined = NotificationTypeV2(rawValue: "REFUND_DECLINED")

    /// `CONSUMPTION_REQUEST`.
    public static let consumptionRequest = NotificationTypeV2(rawValue: "CONSUMPTION_REQUEST")

    /// `RENEWAL_EXTENDED`.
    public static let renewalExtended = NotificationTypeV2(rawValue: "RENEWAL_EXTENDED")

    /// `REVOKE`.
    public static let revoke = NotificationTypeV2(rawValue: "REVOKE")

    /// `TEST`.
    public static let test = NotificationTypeV2(rawValue: "TEST")

    /// `RENEWAL_EXTENSION`.
    public static let renewalExtension = NotificationTypeV2(rawValue: "RENEWAL_EXTENSION")

    /// `REFUND_REVERSED`.
    public static let refundReversed = NotificationTypeV2(rawValue: "REFUND_REVERSED")

    /// `EXTERNAL_PURCHASE_TOKEN`.
    public static let externalPurchaseToken = NotificationTypeV2(rawValue: "EXTERNAL_PURCHASE_TOKEN")

    /// `ONE_TIME_CHARGE`.
    public static let oneTimeCharge = NotificationTypeV2(rawValue: "ONE_TIME_CHARGE")

    /// `RESCIND_CONSENT`.
    public static let rescindConsent = NotificationTypeV2(rawValue: "RESCIND_CONSENT")

    /// `METADATA_UPDATE`.
    public static let metadataUpdate = NotificationTypeV2(rawValue: "METADATA_UPDATE")

    /// `MIGRATION`.
    public static let migration = NotificationTypeV2(rawValue: "MIGRATION")

    /// `PRICE_CHANGE`.
    public static let priceChange = NotificationTypeV2(rawValue: "PRICE_CHANGE")
}
