import StoreGateCore
import StoreGateReceipt

// Apple's verifyReceipt shapes and the receipt verifier's checks, written by JSONWriter with
// the member names and order Apple uses.

extension AppleReceiptJSON: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("receipt_type", receipt_type)
            json.member("adam_id", adam_id)
            json.member("app_item_id", app_item_id)
            json.member("bundle_id", bundle_id)
            json.member("application_version", application_version)
            json.member("download_id", download_id)
            json.member("version_external_identifier", version_external_identifier)
            json.member("receipt_creation_date", receipt_creation_date)
            json.member("receipt_creation_date_ms", receipt_creation_date_ms)
            json.member("receipt_creation_date_pst", receipt_creation_date_pst)
            json.member("request_date", request_date)
            json.member("request_date_ms", request_date_ms)
            json.member("request_date_pst", request_date_pst)
            json.member("original_purchase_date", original_purchase_date)
            json.member("original_purchase_date_ms", original_purchase_date_ms)
            json.member("original_purchase_date_pst", original_purchase_date_pst)
            json.member("original_application_version", original_application_version)
            json.member("expiration_date", expiration_date)
            json.member("expiration_date_ms", expiration_date_ms)
            json.member("expiration_date_pst", expiration_date_pst)
            json.member("in_app", in_app)
        }
    }
}

extension AppleInAppJSON: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("quantity", quantity)
            json.member("product_id", product_id)
            json.member("transaction_id", transaction_id)
            json.member("original_transaction_id", original_transaction_id)
            json.member("purchase_date", purchase_date)
            json.member("purchase_date_ms", purchase_date_ms)
            json.member("purchase_date_pst", purchase_date_pst)
            json.member("original_purchase_date", original_purchase_date)
            json.member("original_purchase_date_ms", original_purchase_date_ms)
            json.member("original_purchase_date_pst", original_purchase_date_pst)
            json.member("expires_date", expires_date)
            json.member("expires_date_ms", expires_date_ms)
            json.member("expires_date_pst", expires_date_pst)
            json.member("web_order_line_item_id", web_order_line_item_id)
            json.member("is_trial_period", is_trial_period)
            json.member("is_in_intro_offer_period", is_in_intro_offer_period)
            json.member("cancellation_date", cancellation_date)
            json.member("cancellation_date_ms", cancellation_date_ms)
            json.member("cancellation_date_pst", cancellation_date_pst)
            json.member("promotional_offer_id", promotional_offer_id)
        }
    }
}

extension ExpectationCheck: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("name", name)
            json.member("passed", passed)
            json.member("detail", detail)
        }
    }
}
