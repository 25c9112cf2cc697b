import FuzzSupport
@_spi(Fuzzing) import StoreGateServer

/// The service's request-body reader (`Sources/StoreGateServer/API/RequestJSON.swift`: strict
/// one-pass RFC 8259, duplicate members, lone surrogates, invalid UTF-8 and deep nesting
/// refused) and every request type read from it, the receipts' base64 included, plus the
/// `/verifyReceipt` drop-in's lenient reading of Apple's request. Seeds: a body of each kind.
@main
enum App {
    static func main() {
        FuzzTarget.run { bytes in
            do throws(APIError) {
                _ = try RequestBodyFuzzing.readRequestBody(bytes)
            } catch {
                FuzzTarget.require(error.status.code == 400, "a body was refused with \(error.status.code), not 400")
            }
        }
    }
}
