public import StoreGateCore

extension JWSTransactionDecodedPayload {
    /// The transaction's price, currency, storefront, offer and reason, as the ledger keeps
    /// them (members the payload does not have stay `nil`).
    public var moneyFacts: MoneyFacts {
        MoneyFacts(
            price: price,
            currency: currency,
            storefront: storefront,
            offerType: offerType?.rawValue,
            offerIdentifier: offerIdentifier,
            offerPeriod: offerPeriod,
            offerDiscountType: offerDiscountType?.rawValue,
            transactionReason: transactionReason?.rawValue
        )
    }
}
