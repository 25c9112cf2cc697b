import Foundation
import HTTPTypes
import Hummingbird
import Logging
import StoreGateCore
import StoreGateLedger
import StoreGateOffers

/// `POST /v1/offers/sign` (`OfferSignRequest`): what to sign, for whom.
struct OfferSignBody: JSONRequestBody {
    let request: OfferSignatureRequest
    let account: String?
    let bundleId: String?

    init(_ object: RequestObject) throws(APIError) {
        try object.rejectUnknownMembers([
            "kind", "account", "bundleId", "productId", "offerIdentifier", "applicationUsername", "transactionId", "allowIntroductoryOffer", "request",
        ])
        account = try object.optionalString("account")
        bundleId = try object.optionalString("bundleId")
        let kindName = try object.string("kind")
        guard let kind = OfferSignatureKind(rawValue: kindName) else {
            let known = OfferSignatureKind.allCases.map(\.rawValue).joined(separator: ", ")
            throw APIError.badField("kind", .invalidField, "'kind' is one of \(known)")
        }
        let allowed: Set<String>
        switch kind {
        case .promotionalOfferV1:
            allowed = ["productId", "offerIdentifier", "applicationUsername"]
            request = .promotionalOfferV1(
                productId: try object.string("productId"), offerIdentifier: try object.string("offerIdentifier"),
                applicationUsername: try object.optionalString("applicationUsername") ?? ""
            )
        case .promotionalOfferV2:
            allowed = ["productId", "offerIdentifier", "transactionId"]
            request = .promotionalOfferV2(
                productId: try object.string("productId"), offerIdentifier: try object.string("offerIdentifier"),
                transactionId: try object.optionalString("transactionId")
            )
        case .introductoryOfferEligibility:
            allowed = ["productId", "transactionId", "allowIntroductoryOffer"]
            guard let allow = try object.optionalBool("allowIntroductoryOffer") else {
                throw APIError.badField("allowIntroductoryOffer", .missingField, "'allowIntroductoryOffer' is required for \(kind.rawValue)")
            }
            request = .introductoryOfferEligibility(productId: try object.string("productId"), allowIntroductoryOffer: allow, transactionId: try object.string("transactionId"))
        case .advancedCommerceInAppRequest:
            allowed = ["request"]
            let text = try object.string("request")
            guard case .success = Array(text.utf8).withUnsafeBytes({ JSONReader.readObject($0) }) else {
                throw APIError.badField("request", .invalidField, "'request' is the Advanced Commerce request as JSON text (an object), signed byte for byte")
            }
            request = .advancedCommerceInAppRequest(request: Array(text.utf8))
        }
        let kindMembers: Set<String> = ["productId", "offerIdentifier", "applicationUsername", "transactionId", "allowIntroductoryOffer", "request"]
        for member in object.object.members.map(\.key).sorted() where kindMembers.contains(member) && !allowed.contains(member) {
            throw APIError.badField(member, .unknownField, "'\(member)' is not a member of a \(kind.rawValue) request")
        }
    }
}

/// A signature on the wire (`OfferSignature`): `{kind, signature}`, the StoreKit 1 values as an
/// object, a JWS as its compact string.
struct OfferSignatureReply: JSONWritable {
    let signature: OfferSignature

    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("kind", signature.kind.rawValue)
            switch signature {
            case .promotionalOfferV1(let v1):
                json.key("signature")
                json.object { json in
                    json.member("encodedSignature", v1.encodedSignature)
                    json.member("productId", v1.productId)
                    json.member("offerIdentifier", v1.offerIdentifier)
                    json.member("keyId", v1.keyId)
                    json.member("nonce", v1.nonce.uuidString.lowercased())
                    json.member("timestamp", v1.timestamp)
                    json.member("applicationUsername", v1.applicationUsername)
                }
            case .jws(_, let compact):
                json.member("signature", compact)
            }
        }
    }
}

extension Endpoints {
    /// Signs an offer for the app, after the eligibility policy: 200 with the signature.
    @Sendable func signOffer(_ request: Request, context: StoreGateRequestContext) async throws -> Response {
        guard let key = configuration.offerSigningKey else {
            throw APIError(.conflict, .offersNotConfigured, "signing offers needs the In-App Purchase key (STOREGATE_OFFER_KEY_ID with STOREGATE_OFFER_PRIVATE_KEY_FILE, or the App Store Server API key)")
        }
        let body = try await decode(OfferSignBody.self, request)
        let bundleId: String
        if let named = body.bundleId {
            guard configuration.apps.contains(where: { $0.bundleId == named }) else {
                throw APIError(.unprocessableContent, .bundleIdNotAccepted, "'\(named.prefix(128))' is not among STOREGATE_BUNDLE_IDS", field: "bundleId")
            }
            bundleId = named
        } else {
            guard configuration.apps.count == 1, let only = configuration.apps.first else {
                throw APIError.badField("bundleId", .missingField, "'bundleId' is required when STOREGATE_BUNDLE_IDS names \(configuration.apps.count) apps")
            }
            bundleId = only.bundleId
        }
        if let account = body.account { _ = try Self.account(account, field: "account") }
        let service: OfferSigningService
        do throws(OfferSigningError) {
            service = OfferSigningService(
                signer: try OfferSigner(key: key, bundleId: bundleId),
                eligibility: LedgerOfferEligibility(policy: configuration.offerEligibility, ledger: ledger, catalog: catalog, now: now)
            )
        } catch {
            throw APIError(.conflict, .offersNotConfigured, error.reason)
        }
        let signature: OfferSignature
        do throws(OfferSigningError) {
            signature = try await service.sign(body.request, account: body.account)
        } catch {
            throw Self.apiError(error, logger: context.logger)
        }
        context.logger.info("offer signed", metadata: [
            "kind": "\(signature.kind.rawValue)", "product": "\(body.request.productId ?? "-")", "account": "\(body.account ?? "-")",
        ])
        return JSONReply.response(OfferSignatureReply(signature: signature))
    }

    /// An offer signing failure as a reply; the key's own failures are logged, never detailed.
    static func apiError(_ error: OfferSigningError, logger: Logger) -> APIError {
        switch error.code {
        case .ineligible:
            return APIError(.unprocessableContent, .offerIneligible, error.reason, field: "account")
        case .eligibilityUnavailable:
            var reply = APIError(.serviceUnavailable, .offerEligibilityUnavailable, "the ledger could not decide the customer's eligibility; retry")
            reply.isRetryable = true
            return reply
        case .invalidRequest:
            return APIError(.unprocessableContent, .invalidField, error.reason, field: error.field)
        default:
            logger.error("offer signing failed", metadata: ["code": "\(error.code)"])
            return APIError(.internalServerError, .internalError, "the signature could not be made")
        }
    }

    /// `POST /v1/offers/sign`.
    var offerRoutes: [Route] {
        [Route(.post, "/v1/offers/sign", .apiKey(.offersSign), signOffer)]
    }
}
