import StoreGateAppStoreClient
import Testing

@testable import StoreGateServer

/// Issue 33, item 1: the Server API's base URLs are two explicit settings; the older single
/// setting keeps its documented stand-in layout (`URL/production`, `URL/sandbox`).
@Suite("App Store Server API base URL settings")
struct AppStoreEndpointSettingsTests {
    @Test("without settings the service calls Apple's recommended domains")
    func defaults() throws {
        let configuration = try ServerConfiguration.load(environment: [:])
        #expect(configuration.appStoreEndpoints == .apple)
        #expect(configuration.appStoreEndpoints.production == "https://api.storekit.apple.com")
        #expect(configuration.appStoreEndpoints.sandbox == "https://api.storekit-sandbox.apple.com")
    }

    @Test("each environment's base URL is its own setting, used exactly as given")
    func perEnvironment() throws {
        let both = try ServerConfiguration.load(environment: [
            "STOREGATE_APPSTORE_API_URL_PRODUCTION": "https://api.storekit.itunes.apple.com",
            "STOREGATE_APPSTORE_API_URL_SANDBOX": "https://api.storekit-sandbox.itunes.apple.com/",
        ])
        #expect(both.appStoreEndpoints == .appleLegacy)
        let sandboxOnly = try ServerConfiguration.load(environment: ["STOREGATE_APPSTORE_API_URL_SANDBOX": "http://127.0.0.1:9000/apple"])
        #expect(sandboxOnly.appStoreEndpoints.production == "https://api.storekit.apple.com")
        #expect(sandboxOnly.appStoreEndpoints.sandbox == "http://127.0.0.1:9000/apple")
    }

    @Test("the older STOREGATE_APPSTORE_API_URL is a stand-in's base: URL/production and URL/sandbox")
    func standInLayout() throws {
        let configuration = try ServerConfiguration.load(environment: ["STOREGATE_APPSTORE_API_URL": "http://127.0.0.1:9000"])
        #expect(configuration.appStoreEndpoints.production == "http://127.0.0.1:9000/production")
        #expect(configuration.appStoreEndpoints.sandbox == "http://127.0.0.1:9000/sandbox")
    }

    @Test("the older setting together with a per-environment one is refused", arguments: [
        "STOREGATE_APPSTORE_API_URL_PRODUCTION", "STOREGATE_APPSTORE_API_URL_SANDBOX",
    ])
    func ambiguous(_ other: String) throws {
        let error = try #require(throws: ConfigurationError.self) {
            try ServerConfiguration.load(environment: ["STOREGATE_APPSTORE_API_URL": "http://127.0.0.1:9000", other: "https://api.example.com"])
        }
        #expect(error.setting == "STOREGATE_APPSTORE_API_URL")
        #expect(error.reason.contains(other))
    }

    @Test("the settings have serve flags")
    func flags() {
        #expect(ServerConfiguration.Setting.appStoreAPIURLProduction.flag == "--appstore-api-url-production")
        #expect(ServerConfiguration.Setting.appStoreAPIURLSandbox.flag == "--appstore-api-url-sandbox")
    }
}
