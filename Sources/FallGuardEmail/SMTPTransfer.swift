import Atomics
import CLibCurl
import FallGuardNotify

/// libcurl, opened and initialised on first use (see Sources/CLibCurl/shim.h), or why it cannot
/// be used. A global's initialiser runs once, under a lock; the table is immutable once loaded.
nonisolated(unsafe) let libcurl: Result<UnsafePointer<fg_curl_api>, LibcurlUnavailable> = {
    var problem: UnsafePointer<CChar>?
    if let api = fg_curl_load(&problem) { return .success(api) }
    return .failure(LibcurlUnavailable(reason: problem.map { String(cString: $0) } ?? "unknown"))
}()

struct LibcurlUnavailable: Error, CustomStringConvertible {
    let reason: String
    var description: String { reason }
}

/// One message sent through one libcurl easy handle. Blocking: run it off the cooperative pool.
struct SMTPTransfer {
    let settings: EmailChannelSettings
    let recipient: String
    let message: [UInt8]
    /// Set by the caller's task cancellation; libcurl aborts at its next progress call.
    let cancelled: ManagedAtomic<Bool>

    /// Sends the message; the SMTP reply code on success. Failures are mapped: 4xx replies,
    /// connection problems and timeouts are transient; 5xx replies (bad credentials, recipient
    /// rejected), a refused STARTTLS and certificate problems are permanent.
    func perform() -> Result<Int, DeliveryFailure> {
        let api: UnsafePointer<fg_curl_api>
        switch libcurl {
        case .success(let a): api = a
        case .failure(let problem): return .failure(.transient("libcurl cannot be used: \(problem)"))
        }
        guard let curl = fg_curl_easy_init(api) else { return .failure(.transient("libcurl could not be initialised")) }
        defer { fg_curl_easy_cleanup(api, curl) }
        let recipients = fg_curl_slist_append(api, nil, "<\(recipient)>")
        defer { fg_curl_slist_free_all(api, recipients) }
        var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        let source = MessageSource(bytes: message, cancelled: cancelled)
        let sourcePointer = Unmanaged.passUnretained(source).toOpaque()

        let code: CURLcode = errorBuffer.withUnsafeMutableBufferPointer { errors in
            _ = fg_curl_set_string(api, curl, CURLOPT_URL, settings.url)
            _ = fg_curl_set_long(api, curl, CURLOPT_USE_SSL, fg_curl_usessl(settings.security == .none ? 0 : 1))
            if let user = settings.username {
                _ = fg_curl_set_string(api, curl, CURLOPT_USERNAME, user)
                _ = fg_curl_set_string(api, curl, CURLOPT_PASSWORD, settings.password ?? "")
            }
            if let ca = settings.caFile { _ = fg_curl_set_string(api, curl, CURLOPT_CAINFO, ca) }
            _ = fg_curl_set_string(api, curl, CURLOPT_MAIL_FROM, "<\(settings.from)>")
            _ = fg_curl_set_list(api, curl, CURLOPT_MAIL_RCPT, recipients)
            _ = fg_curl_set_long(api, curl, CURLOPT_UPLOAD, 1)
            _ = fg_curl_set_read_function(api, curl) { buffer, size, count, me in
                Unmanaged<MessageSource>.fromOpaque(me!).takeUnretainedValue().read(into: buffer!, max: size * count)
            }
            _ = fg_curl_set_pointer(api, curl, CURLOPT_READDATA, sourcePointer)
            _ = fg_curl_set_long(api, curl, CURLOPT_NOPROGRESS, 0)
            _ = fg_curl_set_progress_function(api, curl) { me, _, _, _, _ in
                Unmanaged<MessageSource>.fromOpaque(me!).takeUnretainedValue().cancelled.load(ordering: .relaxed) ? 1 : 0
            }
            _ = fg_curl_set_pointer(api, curl, CURLOPT_XFERINFODATA, sourcePointer)
            _ = fg_curl_set_long(api, curl, CURLOPT_CONNECTTIMEOUT_MS, Int(settings.connectTimeout * 1000))
            _ = fg_curl_set_long(api, curl, CURLOPT_TIMEOUT_MS, Int(settings.timeout * 1000))
            _ = fg_curl_set_long(api, curl, CURLOPT_NOSIGNAL, 1)  // threads: no SIGALRM for timeouts
            _ = fg_curl_set_pointer(api, curl, CURLOPT_ERRORBUFFER, errors.baseAddress)
            return withExtendedLifetime(source) { fg_curl_easy_perform(api, curl) }
        }
        var reply = 0
        _ = fg_curl_response_code(api, curl, &reply)
        if code == CURLE_OK { return .success(reply) }
        let detail = String(decoding: errorBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let why = "SMTP to \(settings.url): \(detail.isEmpty ? String(cString: fg_curl_easy_strerror(api, code)) : detail)"
            + (reply > 0 ? " (reply \(reply))" : "")
        return .failure(Self.classify(code, reply: reply, why))
    }

    /// Whether retrying can help.
    static func classify(_ code: CURLcode, reply: Int, _ why: String) -> DeliveryFailure {
        if reply >= 500 { return .permanent(why) }
        if reply >= 400 { return .transient(why) }
        switch code {
        case CURLE_LOGIN_DENIED, CURLE_USE_SSL_FAILED, CURLE_PEER_FAILED_VERIFICATION,
             CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CERTPROBLEM, CURLE_URL_MALFORMAT,
             CURLE_UNSUPPORTED_PROTOCOL, CURLE_REMOTE_ACCESS_DENIED:
            return .permanent(why)
        default:
            // Connect failures, timeouts, resets, TLS handshakes cut short, cancellation.
            return .transient(why)
        }
    }
}

/// The message bytes handed to libcurl's read callback.
private final class MessageSource {
    let bytes: [UInt8]
    var offset = 0
    let cancelled: ManagedAtomic<Bool>

    init(bytes: [UInt8], cancelled: ManagedAtomic<Bool>) { (self.bytes, self.cancelled) = (bytes, cancelled) }

    func read(into buffer: UnsafeMutablePointer<CChar>, max: Int) -> Int {
        let n = min(max, bytes.count - offset)
        bytes.withUnsafeBufferPointer { all in
            UnsafeMutableRawPointer(buffer).copyMemory(from: all.baseAddress! + offset, byteCount: n)
        }
        offset += n
        return n
    }
}
