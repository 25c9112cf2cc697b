import Foundation
import StoreGateCore
import StoreGateHTTP

/// Turns HTTP statuses that are not success into typed errors, the same way for every endpoint.
enum HTTPStatusPolicy {
    /// Passes the `success` statuses and throws otherwise: 429 with its `Retry-After` time;
    /// 401; a body carrying Apple's `errorCode` as ``AppStoreClientError/Code/apiError``;
    /// any other status as ``AppStoreClientError/Code/httpStatus``. A 5xx keeps a
    /// `Retry-After` header too (RFC 9110 allows one on 503). Which of these are retried is
    /// ``AppStoreClientError/isRetryable``'s rule alone.
    static func requireSuccess(
        _ response: TransportResponse, environment: AppStoreEnvironment?, now: Date = Date(), accepting success: Set<Int> = [200]
    ) throws(AppStoreClientError) {
        if success.contains(response.status) { return }
        switch response.status {
        case 429:
            throw AppStoreClientError(
                .rateLimited,
                reason: "HTTP 429: too many requests",
                apiError: AppStoreAPIErrorCode.parse(response.body),
                httpStatus: 429,
                retryAfter: RetryAfter.parse(response.header("Retry-After"), now: now),
                environment: environment
            )
        case 401:
            throw AppStoreClientError(.unauthorized, reason: "HTTP 401: the request's credentials were refused", httpStatus: 401, environment: environment)
        default:
            let retryAfter = response.status >= 500 ? RetryAfter.parse(response.header("Retry-After"), now: now) : nil
            if let apiError = AppStoreAPIErrorCode.parse(response.body) {
                throw AppStoreClientError(
                    .apiError,
                    reason: "HTTP \(response.status): \(apiError.meaning)",
                    apiError: apiError,
                    httpStatus: response.status,
                    retryAfter: retryAfter,
                    environment: environment
                )
            }
            throw AppStoreClientError(.httpStatus, reason: "HTTP \(response.status)", httpStatus: response.status, retryAfter: retryAfter, environment: environment)
        }
    }
}
