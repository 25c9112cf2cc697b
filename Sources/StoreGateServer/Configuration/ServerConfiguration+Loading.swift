import Foundation
import Logging
import StoreGateAppStoreClient
import StoreGateCore
import StoreGateLedger
import StoreGateLedgerPostgres
import StoreGateLedgerSQLite
import StoreGateOffers
import StoreGateEvents
import StoreGateSync

extension ServerConfiguration {
    /// Reads and checks every setting from environment variables (see ``Setting``).
    ///
    /// Files named by `…_FILE` settings are read here, the trust directory is loaded here, and
    /// every value is validated here, so a service that passed this step does not fail later
    /// on its configuration. An empty variable counts as unset.
    ///
    /// - Parameter environment: The variables (the process environment, with flags merged over it).
    /// - Throws: ``ConfigurationError`` naming the first bad setting.
    public static func load(environment: [String: String]) throws(ConfigurationError) -> ServerConfiguration {
        let reader = SettingReader(environment: environment)
        var configuration = ServerConfiguration()

        if let host = reader.value(.host) {
            guard !host.contains(where: { $0 == " " || $0 == "/" }) else {
                throw ConfigurationError(Setting.host.rawValue, "'\(host)' is not a host name or IP address")
            }
            configuration.host = host
        }
        if let port = try reader.integer(.port, in: 0...65_535) { configuration.port = port }
        if let database = reader.value(.database) { configuration.database = try Self.database(database) }

        if let value = reader.value(.apiKeys) { try configuration.apiKeys.add(environmentValue: value) }
        if let path = reader.value(.apiKeysFile) {
            try configuration.apiKeys.add(fileContents: try reader.fileText(.apiKeysFile, path: path))
        }

        configuration.apps = try Self.apps(
            bundleIds: reader.value(.bundleIds), versions: reader.value(.appVersions), appleIds: reader.value(.appAppleIds)
        )
        if let list = reader.value(.environments) {
            var environments: Set<AppStoreEnvironment> = []
            for name in Self.list(list) {
                guard let environment = AppStoreEnvironment(name: name) else {
                    throw ConfigurationError(Setting.environments.rawValue, "unknown environment '\(name)' (production, sandbox, xcode, localtesting, test)")
                }
                environments.insert(environment)
            }
            guard !environments.isEmpty else {
                throw ConfigurationError(Setting.environments.rawValue, "names no environment")
            }
            configuration.environments = environments
        }
        if let directory = reader.value(.trustDirectory) {
            do {
                configuration.trustStore = try TrustStore.load(directory: directory)
            } catch {
                throw ConfigurationError(Setting.trustDirectory.rawValue, error.reason)
            }
            configuration.trustDirectory = directory
        }

        configuration.encryption = try Self.encryption(reader)
        if let secret = reader.value(.sharedSecret) {
            configuration.sharedSecret = SharedSecret(secret)
        } else if let path = reader.value(.sharedSecretFile) {
            let secret = try reader.fileText(.sharedSecretFile, path: path).trimmingCharacters(in: .whitespacesAndNewlines)
            guard !secret.isEmpty else { throw ConfigurationError(Setting.sharedSecretFile.rawValue, "the file is empty") }
            configuration.sharedSecret = SharedSecret(secret)
        }
        configuration.serverAPICredentials = try Self.serverAPICredentials(reader, apps: configuration.apps)

        if let bytes = try reader.integer(.maxBodyBytes, in: 1024...(1 << 30)) { configuration.maxBodyBytes = bytes }
        if let path = reader.value(.productsFile) {
            configuration.catalog = try Self.catalog(Array(try reader.fileText(.productsFile, path: path).utf8))
            configuration.productsFile = path
        }
        if let text = reader.value(.commission) {
            do throws(LedgerError) {
                configuration.commission = try CommissionRates(parsing: text)
            } catch {
                throw ConfigurationError(Setting.commission.rawValue, error.reason)
            }
        }
        if let path = reader.value(.fxRatesFile) {
            let bytes = Array(try reader.fileText(.fxRatesFile, path: path).utf8)
            do throws(LedgerError) {
                configuration.exchangeRates = try ExchangeRates(json: bytes)
            } catch {
                throw ConfigurationError(Setting.fxRatesFile.rawValue, error.reason)
            }
        }
        if let path = reader.value(.webhooksFile) {
            configuration.webhooks = try Self.webhooks(Array(try reader.fileText(.webhooksFile, path: path).utf8))
        }
        if let value = reader.value(.webhookAllowPrivate) {
            switch value.lowercased() {
            case "true", "1", "yes": configuration.webhookAddressPolicy = .allowingEveryAddress
            case "false", "0", "no": configuration.webhookAddressPolicy = WebhookAddressPolicy()
            default: throw ConfigurationError(Setting.webhookAllowPrivate.rawValue, "'\(value)' is not 1 or 0")
            }
        }
        if let value = reader.value(.apiKeyRateLimit) {
            do throws(LedgerError) {
                configuration.apiKeyRateLimit = try APIKeyRateLimit(text: value)
            } catch {
                throw ConfigurationError(Setting.apiKeyRateLimit.rawValue, error.reason)
            }
        }
        if let namespace = reader.value(.accountTokenNamespace) {
            guard let uuid = UUID(uuidString: namespace) else {
                throw ConfigurationError(Setting.accountTokenNamespace.rawValue, "'\(namespace)' is not a UUID")
            }
            configuration.accountTokenPolicy = .nameBased(namespace: uuid)
        }
        if let text = reader.value(.transferPolicy) {
            guard let policy = TransferPolicy(rawValue: text.lowercased()) else {
                throw ConfigurationError(Setting.transferPolicy.rawValue, "'\(text)' is not refuse or transfer")
            }
            configuration.transferPolicy = policy
        }
        if let mode = reader.value(.sqliteSynchronous) {
            switch mode.lowercased() {
            case "normal": configuration.sqliteSynchronous = .normal
            case "full": configuration.sqliteSynchronous = .full
            default: throw ConfigurationError(Setting.sqliteSynchronous.rawValue, "'\(mode)' is not normal or full")
            }
        }
        if let count = try reader.integer(.sqliteCacheAccounts, in: 0...1_000_000) { configuration.sqliteCachedAccounts = count }
        if let megabytes = try reader.integer(.sqlitePageCache, in: 1...4096) { configuration.sqlitePageCacheMB = megabytes }
        if let megabytes = try reader.integer(.sqliteMmap, in: 0...1_048_576) { configuration.sqliteMmapMB = megabytes }
        if let count = try reader.integer(.postgresMaxConnections, in: 1...1000) { configuration.postgresMaxConnections = count }
        if let milliseconds = try reader.integer(.databaseTimeout, in: 50...600_000) { configuration.databaseTimeout = .milliseconds(milliseconds) }
        if let level = reader.value(.logLevel) {
            guard let parsed = Logger.Level(rawValue: level.lowercased()) else {
                throw ConfigurationError(Setting.logLevel.rawValue, "'\(level)' is not trace, debug, info, notice, warning, error or critical")
            }
            configuration.logLevel = parsed
        }
        if let seconds = try reader.integer(.shutdownGrace, in: 1...3600) { configuration.shutdownGracePeriod = .seconds(seconds) }
        configuration.exportsTraces = Self.exportsTraces(environment: environment)
        if let days = try reader.integer(.eventsRetentionDays, in: 7...36_500) { configuration.eventsRetention = .seconds(days * 86_400) }
        if let minutes = try reader.integer(.consoleSessionMinutes, in: 1...1440) { configuration.consoleSessionLifetime = .seconds(minutes * 60) }
        if let value = reader.value(.consoleSecureCookies) {
            switch value.lowercased() {
            case "true", "1", "yes": configuration.consoleSecureCookies = true
            case "false", "0", "no": configuration.consoleSecureCookies = false
            default: throw ConfigurationError(Setting.consoleSecureCookies.rawValue, "'\(value)' is not true or false")
            }
        }
        try Self.loadSync(reader, into: &configuration)
        try Self.loadOffers(reader, into: &configuration)
        if let finish = try reader.onOff(.finishTransactions) { configuration.finishTransactions = finish }
        configuration.accountLinking = try reader.onOff(.accountLinking) ?? (reader.value(.accountTokenNamespace) != nil)
        return configuration
    }

    /// Where the App Store Server API is: `STOREGATE_APPSTORE_API_URL_PRODUCTION` and
    /// `STOREGATE_APPSTORE_API_URL_SANDBOX`, each the exact base URL of its environment (Apple's
    /// recommended domains when absent); or the older `STOREGATE_APPSTORE_API_URL`, a stand-in's
    /// base with production at `URL/production` and sandbox at `URL/sandbox`. The older one
    /// and either new one together are refused: which would win is not obvious.
    private static func appStoreEndpoints(_ reader: SettingReader) throws(ConfigurationError) -> AppStoreServerAPIEndpoints {
        let standIn = reader.value(.appStoreAPIURL)
        let production = reader.value(.appStoreAPIURLProduction)
        let sandbox = reader.value(.appStoreAPIURLSandbox)
        for (setting, url) in [(Setting.appStoreAPIURL, standIn), (.appStoreAPIURLProduction, production), (.appStoreAPIURLSandbox, sandbox)] {
            if let url, let problem = AppStoreServerAPIEndpoints.problem(withBaseURL: url) {
                throw ConfigurationError(setting.rawValue, problem)
            }
        }
        if let standIn {
            if production != nil || sandbox != nil {
                throw ConfigurationError(
                    Setting.appStoreAPIURL.rawValue,
                    "is set together with \(production != nil ? Setting.appStoreAPIURLProduction.rawValue : Setting.appStoreAPIURLSandbox.rawValue): set either it (a stand-in's base URL) or the per-environment URLs"
                )
            }
            return AppStoreServerAPIEndpoints(standIn: standIn)
        }
        var endpoints = AppStoreServerAPIEndpoints.apple
        if let production { endpoints = endpoints.replacing(.production, with: production) }
        if let sandbox { endpoints = endpoints.replacing(.sandbox, with: sandbox) }
        return endpoints
    }

    /// The offer key (`STOREGATE_OFFER_KEY_ID` with `…_PRIVATE_KEY` or `…_PRIVATE_KEY_FILE`, else
    /// the App Store Server API key) and `STOREGATE_OFFER_ELIGIBILITY`.
    private static func loadOffers(_ reader: SettingReader, into configuration: inout ServerConfiguration) throws(ConfigurationError) {
        var environment: [String: String] = [:]
        for variable in OfferSigningKey.Variable.allCases {
            if let setting = Setting(rawValue: variable.rawValue), let value = reader.value(setting) {
                environment[variable.rawValue] = value
            }
        }
        do throws(OfferSigningError) {
            configuration.offerSigningKey = try OfferSigningKey.fromEnvironment(environment)
        } catch {
            let setting = reader.value(.offerKeyId) != nil ? Setting.offerKeyId : Setting.appStoreKeyId
            throw ConfigurationError(setting.rawValue, "the offer key: \(error.reason)")
        }
        if let value = reader.value(.offerEligibility) {
            guard let policy = OfferEligibilityPolicy(rawValue: value.lowercased()) else {
                throw ConfigurationError(Setting.offerEligibility.rawValue, "'\(value)' is not any, subscribers or lapsed")
            }
            configuration.offerEligibility = policy
        }
    }

    /// The App Store sync's settings.
    private static func loadSync(_ reader: SettingReader, into configuration: inout ServerConfiguration) throws(ConfigurationError) {
        configuration.appStoreEndpoints = try appStoreEndpoints(reader)
        if let enabled = try reader.onOff(.sync) { configuration.syncEnabled = enabled }
        if let seconds = try reader.integer(.syncInterval, in: 10...86_400) { configuration.syncSettings.interval = .seconds(seconds) }
        if let seconds = try reader.integer(.syncLookBack, in: 0...(7 * 86_400)) { configuration.syncSettings.lookBack = .seconds(seconds) }
        if let seconds = try reader.integer(.refreshInterval, in: 0...86_400) { configuration.refreshInterval = .seconds(seconds) }
        if let enabled = try reader.onOff(.refreshOnFirstSight) { configuration.refreshOnFirstSight = enabled }
        if let text = reader.value(.consumption) {
            switch text.lowercased() {
            case "off": configuration.consumption.customerConsented = false
            case "consented": configuration.consumption.customerConsented = true
            default: throw ConfigurationError(Setting.consumption.rawValue, "'\(text)' is not off or consented")
            }
        }
        if let provided = try reader.onOff(.consumptionSampleContent) { configuration.consumption.sampleContentProvided = provided }
        if let text = reader.value(.consumptionRefundPreference) {
            let setting = Setting.consumptionRefundPreference.rawValue
            if text.lowercased() == "none" {
                configuration.consumption.refundPreference = nil
            } else if let preference = ConsumptionInformation.RefundPreference(rawValue: text.uppercased()) {
                configuration.consumption.refundPreference = preference
            } else {
                throw ConfigurationError(setting, "'\(text)' is not none, decline, grant_full or grant_prorated")
            }
        }
        if let text = reader.value(.consumptionRefundPolicy) {
            if text.lowercased() == "none" {
                configuration.consumption.refundPolicy = nil
            } else {
                do throws(SyncError) {
                    configuration.consumption.refundPolicy = try ConsumptionRefundPolicy(parsing: text)
                } catch {
                    throw ConfigurationError(Setting.consumptionRefundPolicy.rawValue, error.reason)
                }
            }
        }
        if let text = reader.value(.syncStart) {
            let formatter = ISO8601DateFormatter()
            var date = formatter.date(from: text)
            if date == nil {
                formatter.formatOptions = [.withFullDate]
                date = formatter.date(from: text)
            }
            guard let date else {
                throw ConfigurationError(Setting.syncStart.rawValue, "'\(text)' is not a date such as 2026-06-01 or 2026-06-01T00:00:00Z")
            }
            configuration.syncSettings.firstStart = date
        }
    }

    /// `sqlite:PATH` or a `postgres://` URL.
    static func database(_ value: String) throws(ConfigurationError) -> Database {
        let setting = Setting.database.rawValue
        if value.hasPrefix("sqlite:") {
            let path = String(value.dropFirst("sqlite:".count))
            guard !path.isEmpty else { throw ConfigurationError(setting, "sqlite: names no file (sqlite:./storegate.sqlite)") }
            return .sqlite(path: path)
        }
        if value.hasPrefix("postgres://") || value.hasPrefix("postgresql://") {
            do {
                _ = try PostgresURL.clientConfiguration(value)
            } catch {
                throw ConfigurationError(setting, error.reason)
            }
            return .postgres(url: value)
        }
        throw ConfigurationError(setting, "expected sqlite:PATH or postgres://user:password@host:port/database")
    }

    /// The accepted apps from the bundle id, version and App Store id lists.
    static func apps(bundleIds: String?, versions: String?, appleIds: String?) throws(ConfigurationError) -> [App] {
        var apps: [App] = []
        for bundleId in list(bundleIds ?? "") {
            guard bundleId.utf8.count <= 255, !bundleId.contains(where: { $0.isWhitespace || $0 == "=" }) else {
                throw ConfigurationError(Setting.bundleIds.rawValue, "'\(bundleId)' is not a bundle id")
            }
            guard !apps.contains(where: { $0.bundleId == bundleId }) else {
                throw ConfigurationError(Setting.bundleIds.rawValue, "'\(bundleId)' appears twice")
            }
            apps.append(App(bundleId: bundleId))
        }
        func target(_ entry: String, _ setting: Setting) throws(ConfigurationError) -> (index: Int, value: String) {
            let parts = entry.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            if parts.count == 2 {
                guard let index = apps.firstIndex(where: { $0.bundleId == parts[0] }) else {
                    throw ConfigurationError(setting.rawValue, "'\(parts[0])' is not in STOREGATE_BUNDLE_IDS")
                }
                return (index, parts[1])
            }
            guard apps.count == 1 else {
                throw ConfigurationError(setting.rawValue, "with \(apps.count) bundle ids, write each entry as BUNDLE_ID=VALUE")
            }
            return (0, entry)
        }
        for entry in list(versions ?? "") {
            let (index, version) = try target(entry, .appVersions)
            guard !version.isEmpty else { throw ConfigurationError(Setting.appVersions.rawValue, "an app version is empty") }
            apps[index].appVersions.insert(version)
        }
        for entry in list(appleIds ?? "") {
            let (index, text) = try target(entry, .appAppleIds)
            guard let id = Int64(text), id > 0 else {
                throw ConfigurationError(Setting.appAppleIds.rawValue, "'\(text)' is not an App Store app id (a positive number)")
            }
            apps[index].appAppleId = id
        }
        return apps
    }

    private static func encryption(_ reader: SettingReader) throws(ConfigurationError) -> ProofEncryption? {
        let specification: String
        let setting: Setting
        if let value = reader.value(.ledgerKeys) {
            (specification, setting) = (value, .ledgerKeys)
        } else if let path = reader.value(.ledgerKeysFile) {
            (specification, setting) = (try reader.fileText(.ledgerKeysFile, path: path).trimmingCharacters(in: .whitespacesAndNewlines), .ledgerKeysFile)
        } else {
            return nil
        }
        do {
            return try ProofEncryption(specification: specification)
        } catch {
            throw ConfigurationError(setting.rawValue, error.reason)
        }
    }

    private static func serverAPICredentials(_ reader: SettingReader, apps: [App]) throws(ConfigurationError) -> AppStoreServerAPICredentials? {
        let keyId = reader.value(.appStoreKeyId)
        let issuerId = reader.value(.appStoreIssuerId)
        let keyFile = reader.value(.appStorePrivateKeyFile)
        if keyId == nil, issuerId == nil, keyFile == nil { return nil }
        guard let keyId else { throw ConfigurationError(Setting.appStoreKeyId.rawValue, "is required with the other STOREGATE_APPSTORE_* settings") }
        guard let issuerId else { throw ConfigurationError(Setting.appStoreIssuerId.rawValue, "is required with the other STOREGATE_APPSTORE_* settings") }
        guard let keyFile else { throw ConfigurationError(Setting.appStorePrivateKeyFile.rawValue, "is required with the other STOREGATE_APPSTORE_* settings") }
        guard let bundleId = apps.first?.bundleId else {
            throw ConfigurationError(Setting.appStoreKeyId.rawValue, "Server API credentials need an app in STOREGATE_BUNDLE_IDS")
        }
        let pem = try reader.fileText(.appStorePrivateKeyFile, path: keyFile)
        do {
            return try AppStoreServerAPICredentials(keyId: keyId, issuerId: issuerId, bundleId: bundleId, privateKeyPEM: pem)
        } catch {
            throw ConfigurationError(Setting.appStorePrivateKeyFile.rawValue, error.reason)
        }
    }

    /// A comma-separated list, trimmed, without empty entries.
    static func list(_ value: String) -> [String] {
        value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}

/// Reads settings from the environment dictionary.
struct SettingReader {
    let environment: [String: String]

    /// The trimmed value, or `nil` when unset or empty.
    func value(_ setting: ServerConfiguration.Setting) -> String? {
        guard let raw = environment[setting.rawValue] else { return nil }
        let trimmed = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? nil : trimmed
    }

    func integer(_ setting: ServerConfiguration.Setting, in range: ClosedRange<Int>) throws(ConfigurationError) -> Int? {
        guard let text = value(setting) else { return nil }
        guard let number = Int(text), range.contains(number) else {
            throw ConfigurationError(setting.rawValue, "'\(text)' is not a whole number in \(range.lowerBound)...\(range.upperBound)")
        }
        return number
    }

    /// `on`/`true`/`1` or `off`/`false`/`0`; `nil` when unset.
    func onOff(_ setting: ServerConfiguration.Setting) throws(ConfigurationError) -> Bool? {
        guard let text = value(setting) else { return nil }
        switch text.lowercased() {
        case "on", "true", "1": return true
        case "off", "false", "0": return false
        default: throw ConfigurationError(setting.rawValue, "'\(text)' is not on or off")
        }
    }

    func fileText(_ setting: ServerConfiguration.Setting, path: String) throws(ConfigurationError) -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError(setting.rawValue, "cannot read the file \(path)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ConfigurationError(setting.rawValue, "the file \(path) is not UTF-8 text")
        }
        return text
    }
}

extension ServerConfiguration {
    /// Reads and checks a product catalog (``ProductCatalog/init(json:)``).
    ///
    /// - Throws: ``ConfigurationError`` naming `STOREGATE_PRODUCTS_FILE` and, in one line, the
    ///   bad entry.
    static func catalog(_ bytes: [UInt8]) throws(ConfigurationError) -> ProductCatalog {
        do throws(LedgerError) {
            return try ProductCatalog(json: bytes)
        } catch {
            throw ConfigurationError(Setting.productsFile.rawValue, error.reason)
        }
    }

    /// Reads `{"endpoints": [{"name": "…", "url": "…", "secrets": ["…", "…"], "types": ["…"]}]}`:
    /// each endpoint has `secrets` (one or more, all signing: a rotation) or a single `secret`,
    /// not both.
    static func webhooks(_ bytes: [UInt8]) throws(ConfigurationError) -> [WebhookEndpoint] {
        let setting = Setting.webhooksFile.rawValue
        let shape = "expected {\"endpoints\": [{\"name\": \"…\", \"url\": \"https://…\", \"secrets\": [\"…\"], \"types\": [\"…\"]}]} (or \"secret\": \"…\" for one secret)"
        guard case .success(let document) = JSONReader.readObject(bytes), case .array(let entries)? = document["endpoints"],
              document.members.count == 1
        else {
            throw ConfigurationError(setting, shape)
        }
        var endpoints: [WebhookEndpoint] = []
        for entry in entries {
            guard case .object(let object) = entry, case .string(let name)? = object["name"], case .string(let url)? = object["url"],
                  object.members.allSatisfy({ ["name", "url", "secret", "secrets", "types"].contains($0.key) })
            else {
                throw ConfigurationError(setting, shape)
            }
            var secrets: [String] = []
            switch (object["secret"], object["secrets"]) {
            case (.string(let secret)?, nil):
                secrets = [secret]
            case (nil, .array(let list)?):
                for item in list {
                    guard case .string(let secret) = item else { throw ConfigurationError(setting, "endpoint '\(name)': secrets are strings") }
                    secrets.append(secret)
                }
                guard !secrets.isEmpty else { throw ConfigurationError(setting, "endpoint '\(name)': secrets lists at least one secret") }
            case (.some, .some):
                throw ConfigurationError(setting, "endpoint '\(name)': give either secret or secrets, not both")
            case (nil, nil):
                throw ConfigurationError(setting, "endpoint '\(name)': it needs secrets (or secret)")
            default:
                throw ConfigurationError(setting, "endpoint '\(name)': secret is a string, secrets an array of strings")
            }
        var types: Set<String>?
            switch object["types"] {
            case nil, .null?:
                types = nil
            case .array(let list)?:
                var set: Set<String> = []
                for item in list {
                    guard case .string(let type) = item else { throw ConfigurationError(setting, "endpoint '\(name)': types are strings") }
                    set.insert(type)
                }
                types = set
            default:
                throw ConfigurationError(setting, "endpoint '\(name)': types is an array of event types")
            }
            do throws(WebhookConfigurationError) {
                endpoints.append(try WebhookEndpoint(name: name, url: url, secrets: secrets, types: types))
            } catch {
                throw ConfigurationError(setting, error.description)
            }
        }
        guard Set(endpoints.map(\.name)).count == endpoints.count else {
            throw ConfigurationError(setting, "two endpoints have the same name")
        }
        return endpoints
    }

    /// Whether the OpenTelemetry variables ask for traces over OTLP (``ServerConfiguration/exportsTraces``).
    static func exportsTraces(environment: [String: String]) -> Bool {
        func value(_ name: String) -> String? {
            guard let value = environment[name]?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
            return value
        }
        guard value("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != nil || value("OTEL_EXPORTER_OTLP_ENDPOINT") != nil else { return false }
        if value("OTEL_SDK_DISABLED")?.lowercased() == "true" { return false }
        if let exporter = value("OTEL_TRACES_EXPORTER"), exporter.lowercased() != "otlp" { return false }
        return true
    }
}
