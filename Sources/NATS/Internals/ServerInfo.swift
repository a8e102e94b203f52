/// What the server's `INFO` says about itself and its cluster; the fields the client uses.
struct ServerInfo: Decodable, Sendable {
    var serverID: String
    var serverName: String?
    var version: String?
    var headers: Bool?
    var maxPayload: Int
    var connectURLs: [String]?
    var jetStream: Bool?
    var authRequired: Bool?
    var lameDuckMode: Bool?

    enum CodingKeys: String, CodingKey {
        case serverID = "server_id"
        case serverName = "server_name"
        case version
        case headers
        case maxPayload = "max_payload"
        case connectURLs = "connect_urls"
        case jetStream = "jetstream"
        case authRequired = "auth_required"
        case lameDuckMode = "ldm"
    }
}

/// The client's `CONNECT`: no `+OK` per operation (verbose false), no pedantic checks, headers and no-responders
/// statuses on.
struct ConnectRequest: Encodable {
    var verbose = false
    var pedantic = false
    var tlsRequired = false
    var name: String?
    var lang = "swift"
    var version = "1.0.0"
    var protocolVersion = 1
    var headers = true
    var noResponders = true
    var echo: Bool
    var user: String?
    var password: String?
    var token: String?

    enum CodingKeys: String, CodingKey {
        case verbose
        case pedantic
        case tlsRequired = "tls_required"
        case name
        case lang
        case version
        case protocolVersion = "protocol"
        case headers
        case noResponders = "no_responders"
        case echo
        case user
        case password = "pass"
        case token = "auth_token"
    }
}
