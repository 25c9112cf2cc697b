import Foundation

/// Apple's commission on each product's sales, for estimated proceeds: a default rate (30 %,
/// or 15 % for a developer in the App Store Small Business Program) and per-product
/// exceptions (a subscription's second year at 15 %, say).
///
/// Rates are per mille (300 is 30 %), so every estimate is computed in integers.
public struct CommissionRates: Sendable, Hashable, Codable {
    /// The rate of products without an exception, per mille.
    public var defaultPerMille: Int
    /// Rates per product id, per mille.
    public var products: [String: Int]

    /// Apple's standard commission (30 %).
    public static let standard = CommissionRates(defaultPerMille: 300)
    /// The App Store Small Business Program's commission (15 %).
    public static let smallBusiness = CommissionRates(defaultPerMille: 150)

    /// Creates rates.
    public init(defaultPerMille: Int, products: [String: Int] = [:]) {
        self.defaultPerMille = defaultPerMille
        self.products = products
    }

    /// The rate of `productId`, per mille.
    public func perMille(for productId: String) -> Int {
        products[productId] ?? defaultPerMille
    }

    /// The proceeds of `amount` milliunits of `productId`'s sales: amount × (1000 − rate) ÷
    /// 1000, rounded half away from zero.
    public func proceeds(of amount: Int64, productId: String) -> Int64 {
        Self.proceeds(of: amount, perMille: perMille(for: productId))
    }

    /// The proceeds of `amount` milliunits at a commission of `perMille`: what
    /// ``proceeds(of:productId:)`` computes once the product's rate is known.
    package static func proceeds(of amount: Int64, perMille: Int) -> Int64 {
        let kept = Int64(1000 - perMille)
        let product = amount.multipliedReportingOverflow(by: kept).partialValue
        let (quotient, remainder) = product.quotientAndRemainder(dividingBy: 1000)
        if abs(remainder) * 2 >= 1000 { return quotient + (product < 0 ? -1 : 1) }
        return quotient
    }

    /// Parses the `STOREGATE_COMMISSION` setting: `standard` (30 %), `small-business` (15 %),
    /// or a percentage, optionally followed by per-product exceptions
    /// (`15,pro.yearly=30,coins=30`).
    ///
    /// - Throws: ``LedgerError/Code/invalidConfiguration`` for anything else.
    public init(parsing text: String) throws(LedgerError) {
        var parts = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        guard !parts.isEmpty else { throw LedgerError(.invalidConfiguration, reason: "the commission setting is empty") }
        let first = parts.removeFirst()
        func percent(_ text: some StringProtocol) throws(LedgerError) -> Int {
            guard let value = Int(text), (0...100).contains(value) else {
                throw LedgerError(.invalidConfiguration, reason: "a commission is a whole percentage 0...100, got '\(text.prefix(20))'")
            }
            return value * 10
        }
        switch first {
        case "standard": defaultPerMille = 300
        case "small-business": defaultPerMille = 150
        default: defaultPerMille = try percent(first)
        }
        products = [:]
        for part in parts {
            let pair = part.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, !pair[0].isEmpty else {
                throw LedgerError(.invalidConfiguration, reason: "a per-product commission reads product=percent, got '\(part.prefix(40))'")
            }
            products[String(pair[0])] = try percent(pair[1])
        }
    }
}
