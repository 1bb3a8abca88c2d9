/// `text` with every scalar that `keep` refuses written as `%XX` per UTF-8 byte (uppercase hex).
/// As in Foundation's `addingPercentEncoding(withAllowedCharacters:)`, only ASCII is ever kept:
/// `é` is encoded even where letters are allowed. The one percent-encoder of the bridge (the
/// redactor's forms of a secret, Twilio's form bodies, the page's paths), without Foundation's
/// character sets, whose first use loads CoreFoundation's Unicode tables (README, "Memory").
public func percentEncoded(_ text: String, keeping keep: (Unicode.Scalar) -> Bool) -> String {
    var out = ""
    for scalar in text.unicodeScalars {
        if scalar.isASCII && keep(scalar) { out.unicodeScalars.append(scalar); continue }
        for byte in String(scalar).utf8 {
            let hex = String(byte, radix: 16, uppercase: true)
            out += "%" + (hex.count == 1 ? "0" : "") + hex
        }
    }
    return out
}

/// RFC 3986's unreserved characters: ASCII letters, digits, `-`, `.`, `_` and `~`.
public func isURLUnreserved(_ s: Unicode.Scalar) -> Bool {
    s.isASCII && (("a"..."z").contains(s) || ("A"..."Z").contains(s) || ("0"..."9").contains(s) || "-._~".unicodeScalars.contains(s))
}
