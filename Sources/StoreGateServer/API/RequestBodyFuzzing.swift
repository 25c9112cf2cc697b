import NIOCore
public import StoreGateCore
import StoreGateReceipt

/// Entry point for StoreGate's fuzz targets (`Fuzz/`): the service's reading of request
/// bodies, without a running server.
///
/// Not API: the `Fuzzing` SPI may change with any release.
@_spi(Fuzzing)
public enum RequestBodyFuzzing {
    /// Reads `body` as the service reads every request body: ``RequestJSONReader`` first, then
    /// each request type the endpoints accept (receipt, transaction and notification
    /// verification, consumption), then the receipt's base64 where one is named; and, apart,
    /// as the `/verifyReceipt` drop-in reads Apple's request members.
    ///
    /// Refusals by the request types and the base64 reader are typed errors; they are counted
    /// out, not returned, since the caller only needs to know that each came back.
    ///
    /// - Returns: The names of the request types that accepted the body.
    /// - Throws: ``APIError`` when the body is not a JSON object by the reader's rules.
    public static func readRequestBody(_ body: [UInt8], limits: Limits = .default) throws(APIError) -> [String] {
        let buffer = ByteBuffer(bytes: body)
        if let receiptData = Endpoints.LegacyRequest(buffer).receiptData {
            _ = decodesReceipt(receiptData, limits)
        }
        let object = try RequestJSONReader.object(buffer)
        var accepted: [String] = []
        do throws(APIError) {
            let request = try ReceiptVerifyRequest(object)
            accepted.append(decodesReceipt(request.receipt, limits) ? "receipt" : "receipt (not base64)")
        } catch {}
        do throws(APIError) {
            _ = try TransactionVerifyRequest(object)
            accepted.append("transaction")
        } catch {}
        do throws(APIError) {
            _ = try NotificationRequest(object)
            accepted.append("notification")
        } catch {}
        do throws(APIError) {
            _ = try ConsumeRequest(object)
            accepted.append("consume")
        } catch {}
        return accepted
    }

    private static func decodesReceipt(_ text: String, _ limits: Limits) -> Bool {
        do throws(ReceiptError) {
            _ = try UnverifiedReceipt.der(base64: text, limits: limits)
            return true
        } catch {
            return false
        }
    }
}
