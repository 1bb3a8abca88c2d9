import FallGuardConfigKeys
import FallGuardCore
import FallGuardNotify
import Foundation
import Yams

/// One configuration file, read once, from which each part of the bridge takes its section.
///
/// Nothing stops at the first mistake: every problem — YAML syntax, wrong types, unknown keys
/// (with the closest known key), missing environment variables, a credentials file others can
/// read, and each section's own ``ConfigSection/problems(at:)`` — is collected in
/// ``diagnostics`` with its file and line, and a section with bad values still comes back
/// with its defaults in their place, so `check-config` can list everything in one run.
///
/// ```swift
/// var doc = ConfigDocument.load(path: "/etc/fallguard/config.yaml")
/// let sensor = doc.section(SensorSection.self, at: "sensor")
/// let all = doc.finish()          // adds unknown top-level sections
/// if ConfigReport.printAndShouldStop(all) { exit(ConfigReport.exitStatus) }
/// ```
public struct ConfigDocument {
    /// The configuration file's path, as given.
    public let path: String
    /// Everything found so far, in the order found.
    public private(set) var diagnostics: [ConfigDiagnostic] = []
    /// Hides every secret value this document knows of; use it on anything logged.
    public private(set) var redactor = SecretRedactor()

    /// The whole tree: the file, the credentials file laid over it, `${NAME}` expanded.
    private var root: Node
    /// Values that came from the credentials file, by key path, for placing their problems.
    private var credentialPaths: Set<[String]> = []
    /// Values given as `${NAME}`: not secrets written in clear.
    private var environmentPaths: Set<[String]> = []
    private var credentialsFile: String?
    /// Top-level keys some section has been read from.
    private var claimed: Set<String> = [ConfigSecrets.credentialsFileKey]

    /// Reads and parses `path`; a missing or unreadable file is a diagnostic, not a throw.
    public static func load(path: String,
                            environment: [String: String] = ProcessInfo.processInfo.environment) -> ConfigDocument {
        switch readText(path) {
        case let .success(text):
            return ConfigDocument(yaml: text, path: path, environment: environment)
        case let .failure(failure):
            var doc = ConfigDocument(yaml: "", path: path, environment: environment)
            doc.diagnostics.append(ConfigDiagnostic(file: path, line: nil, problem: ConfigProblem([], "cannot read the configuration file: \(failure.reason)")))
            return doc
        }
    }

    /// Parses `yaml` as if read from `path` (relative credentials-file paths start there).
    public init(yaml: String, path: String,
                environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.path = path
        root = .mapping(YAMLTypes.emptyMapping())
        guard let parsed = parse(yaml, file: path) else { return }
        guard case .mapping = parsed else {
            report(ConfigProblem([], "the configuration must be a mapping of sections (sensor:, detector:, …), found \(parsed.shortDescription)"),
                   file: path, line: parsed.mark?.line)
            return
        }
        root = parsed
        layCredentialsFile(environment: environment)
        environmentPaths = Set(root.leaves().filter { $0.node.string?.contains("${") == true }.map(\.path))
        let (expanded, envProblems) = ConfigSecrets.substituteEnvironment(in: root, environment: environment, redactor: &redactor)
        root = expanded
        envProblems.forEach { report($0) }
        collectSecretKeys()
        refuseSecretsInCommands()
    }

    /// The file's top-level keys (with the credentials file's), in no particular order.
    public var topLevelKeys: [String] {
        guard case let .mapping(m) = root else { return [] }
        return m.keys.compactMap(\.string)
    }

    /// Whether any diagnostic so far is an error (start-up must stop).
    public var hasErrors: Bool { diagnostics.contains { $0.isError } }

    /// Decodes the section at top-level `key` (defaults when absent), checks it, and records
    /// every problem. Returns nil only when the section cannot be built at all (a key
    /// without a default is missing).
    public mutating func section<T: ConfigSection>(_ type: T.Type, at key: String) -> T? {
        claimed.insert(key)
        return decode(type, at: [key])
    }

    /// Decodes the whole file as one value (for a top-level struct holding every section).
    /// When that value cannot be built (a key without a default is missing), its declared
    /// sections still count as known: only a top-level key it does not declare is reported.
    public mutating func decodeWhole<T: ConfigSection>(_ type: T.Type) -> T? {
        let value = decode(type, at: [])
        if value == nil, let keyed = T.self as? any KeyedSection.Type { claimed.formUnion(keyed.keyNames) }
        return value
    }

    /// Adds the unknown top-level sections (those no ``section(_:at:)`` call claimed) and
    /// returns every diagnostic, sorted by file and line.
    public mutating func finish() -> [ConfigDiagnostic] {
        if case let .mapping(m) = root {
            for key in Array(m.keys) {
                guard let name = key.string, !claimed.contains(name) else { continue }
                report(ConfigProblem([name], KeySuggestion.unknownKeyMessage(name, known: Array(claimed))))
            }
            claimed = Set(Array(m.keys).compactMap(\.string))   // report each once, even if called again
        }
        return diagnostics.enumerated().sorted { a, b in
            (a.element.file, a.element.line ?? 0, a.offset) < (b.element.file, b.element.line ?? 0, b.offset)
        }.map(\.element)
    }

    // MARK: decoding one section

    private mutating func decode<T: ConfigSection>(_ type: T.Type, at path: [String]) -> T? {
        var original = root.value(at: path[...]) ?? .mapping(YAMLTypes.emptyMapping())
        // `credentials-file` is this document's own key (read when the file was laid over):
        // the whole file decoded as one value must not see it as a section it does not know.
        if path.isEmpty, let rest = original.removing([ConfigSecrets.credentialsFileKey]) { original = rest }
        var node = original
        var reported: [[String]] = []
        var value: T?
        for _ in 0..<100 {
            do {
                value = try YAMLDecoder().decode(Configured<T>.self, from: node,
                                                userInfo: [MappingKeys.userInfoKey: YAMLTypes.mappingKeys(of: node)]).value
                break
            } catch let error as DecodingError {
                let p = DecodingProblem(error, in: node)
                // A required key dropped for its bad value is then missing: already said.
                if !reported.contains(p.path) { report(ConfigProblem(path + p.path, p.message)) }
                reported.append(p.path)
                guard p.canRetryWithout else { return nil }
                // Drop the bad value (or, for a list element, the whole list) and decode again.
                let prefixes = stride(from: p.path.count, to: 0, by: -1).map { p.path.prefix($0) }
                if let smaller = prefixes.lazy.compactMap({ node.removing($0) }).first {
                    node = smaller
                } else if node.mapping?.isEmpty != true {
                    node = .mapping(YAMLTypes.emptyMapping())   // the section itself is unusable: all defaults
                } else {
                    return nil
                }
            } catch {
                report(ConfigProblem(path, "\(error)"))
                return nil
            }
        }
        guard let value else { return nil }
        reportUnknownKeys(of: value, original: original, at: path, skipping: reported)
        value.problems(at: path).forEach { report($0) }
        return value
    }

    /// Keys in the file that do not survive decode → encode are not read by anything.
    private mutating func reportUnknownKeys<T: ConfigSection>(of value: T, original: Node, at path: [String],
                                                              skipping reported: [[String]]) {
        guard let known = try? keyShape(of: Configured(value)) else { return }
        // Decoding the whole file checked every top-level key: finish() has nothing to add.
        if path.isEmpty, case let .mapping(m) = original { Array(m.keys).compactMap(\.string).forEach { claimed.insert($0) } }
        for (p, message) in Self.unknownKeys(in: original, known: known) {
            guard !reported.contains(where: { p.starts(with: $0) }) else { continue }
            report(ConfigProblem(path + p, message))
        }
    }

    static func unknownKeys(in file: Node, known: Node, at prefix: [String] = []) -> [([String], String)] {
        switch (file, known) {
        case let (.mapping(f), .mapping(k)):
            let names = Array(k.keys).compactMap(\.string)
            return f.flatMap { pair -> [([String], String)] in
                guard let name = pair.key.string else { return [] }
                guard let inner = k.first(where: { $0.key.string == name })?.value else {
                    return [(prefix + [name], KeySuggestion.unknownKeyMessage(name, known: names))]
                }
                return unknownKeys(in: pair.value, known: inner, at: prefix + [name])
            }
        case let (.sequence(f), .sequence(k)):
            return zip(f, k).enumerated().flatMap { unknownKeys(in: $0.element.0, known: $0.element.1, at: prefix + [String($0.offset)]) }
        default:
            return []
        }
    }

    // MARK: secrets

    private mutating func layCredentialsFile(environment: [String: String]) {
        let key = [ConfigSecrets.credentialsFileKey]
        guard let ref = root.value(at: key[...]) else { return }
        guard let given = ref.string, !given.isEmpty else {
            return report(ConfigProblem(key, "expected the path of the credentials file, found \(ref.shortDescription)"))
        }
        let file = given.hasPrefix("/") ? given
            : URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent(given).path
        let text: String
        switch Self.readText(file) {
        case let .success(t): text = t
        case let .failure(failure): return report(ConfigProblem(key, "cannot read the credentials file \(file): \(failure.reason)"))
        }
        credentialsFile = file
        if let warning = ConfigSecrets.modeWarning(file, key: key, what: "the credentials file") {
            report(warning, file: file, line: nil)
        }
        guard let creds = parse(text, file: file) else { return }
        guard case .mapping = creds else {
            return report(ConfigProblem([], "the credentials file must be a mapping laid over the configuration (channels:, …)"),
                          file: file, line: creds.mark?.line)
        }
        for leaf in creds.leaves() where !leaf.path.isEmpty {
            root = root.setting(leaf.node, at: leaf.path[...])
            credentialPaths.insert(leaf.path)
            leaf.node.string.map { redactor.add($0) }
        }
    }

    /// Values under secret-sounding keys are redacted too, and a world-readable file holding
    /// one in clear is worth a warning (0640 root:fallguard, as installed, is not).
    private mutating func collectSecretKeys() {
        var plainSecret: [String]?
        for leaf in root.leaves() {
            leaf.node.string.map { redactor.add(contentsOf: SecretRedactor.secrets(inURL: $0, path: false)) }   // https://user:pass@host
            guard let last = leaf.path.last, SecretRedactor.isSecretKey(last), let value = leaf.node.string,
                  !value.isEmpty, value != "null", value != "~" else { continue }
            redactor.add(value)
            if !credentialPaths.contains(leaf.path), !environmentPaths.contains(leaf.path), plainSecret == nil {
                plainSecret = leaf.path
            }
        }
        if let key = plainSecret,
           let warning = ConfigSecrets.modeWarning(path, key: key, what: "it is written in clear and the configuration file", mask: 0o007) {
            report(warning)
        }
    }

    /// An exec channel's arguments are visible to every user (`ps`, /proc/PID/cmdline): a
    /// `${NAME}` or a credentials-file value there would publish the secret. The command
    /// reads its secrets itself (a file only its user may read).
    private mutating func refuseSecretsInCommands() {
        for path in (environmentPaths.union(credentialPaths)).sorted(by: { $0.lexicographicallyPrecedes($1) })
        where path.count == 4 && path[0] == "channels" && path[2] == "command"
            && root.value(at: ["channels", path[1], "type"]).flatMap(\.string) == "exec" {
            report(ConfigProblem(path, "a secret (${NAME} or the credentials file) in a command's arguments is visible to every "
                                 + "user in ps: let the program read it from a file only its user may read"))
        }
    }

    // MARK: reporting

    /// The largest configuration or credentials file read: a real one is a few KiB.
    static let maximumFileSize = 1 << 20
    /// The most values a file may hold with every alias expanded: a real one has a few hundred;
    /// a "billion laughs" of nested aliases would exhaust the memory of whatever walks it.
    static let maximumNodes = 100_000

    private mutating func parse(_ text: String, file: String) -> Node? {
        guard text.utf8.count <= Self.maximumFileSize else {
            report(ConfigProblem([], "the file is larger than \(Self.maximumFileSize / 1024) KiB: not a configuration"), file: file, line: nil)
            return nil
        }
        do {
            let node = try Yams.compose(yaml: text, .basic) ?? .mapping(YAMLTypes.emptyMapping())
            guard node.expandedCount(upTo: Self.maximumNodes) <= Self.maximumNodes else {
                report(ConfigProblem([], "aliases expand the file to more than \(Self.maximumNodes) values: not a configuration"),
                       file: file, line: nil)
                return nil
            }
            // Typed by YAMLTypes, not by Yams' default resolver (its regular expressions cost memory);
            // only now, as typing walks every value an alias repeats.
            return YAMLTypes.typed(node)
        } catch let error as YamlError {
            let (message, mark) = Self.describe(error)
            diagnostics.append(ConfigDiagnostic(file: file, line: mark?.line, column: mark?.column,
                                                problem: ConfigProblem([], redactor.redact(message))))
        } catch {
            report(ConfigProblem([], "\(error)"), file: file, line: nil)
        }
        return nil
    }

    /// Places a problem: the credentials file for values that came from it, else this file;
    /// the line of the key (or of the deepest part of the path that exists).
    private mutating func report(_ problem: ConfigProblem, file: String? = nil, line: Int? = nil) {
        var p = problem
        p.message = redactor.redact(p.message)
        let fromCredentials = credentialsFile != nil && credentialPaths.contains { problem.keyPath.starts(with: $0) }
        let where_ = file ?? (fromCredentials ? credentialsFile! : path)
        let l = line ?? (file == nil ? root.mark(for: problem.keyPath)?.line : nil)
        diagnostics.append(ConfigDiagnostic(file: where_, line: l, problem: p))
    }

    static func describe(_ error: YamlError) -> (String, Mark?) {
        switch error {
        case let .scanner(context, problem, mark, _), let .parser(context, problem, mark, _),
             let .composer(context, problem, mark, _):
            let ctx = context.map { " (\($0.text) at line \($0.mark.line))" } ?? ""
            return ("YAML syntax: \(problem)\(ctx)", mark)
        case let .duplicatedKeysInMapping(duplicates, context):
            return ("duplicate key \(duplicates.map { "'\($0)'" }.joined(separator: ", ")) in the mapping \(context.text)", context.mark)
        case let .reader(problem, _, _, _):
            return ("cannot read the YAML text: \(problem)", nil)
        default:
            return ("\(error)", nil)
        }
    }

    /// The file's text, or why it cannot be read (`No such file or directory`, `Permission denied`).
    /// Only a regular file of at most ``maximumFileSize`` bytes is read (a FIFO or /dev/zero
    /// would block or never end).
    static func readText(_ file: String) -> Result<String, ReadFailure> {
        guard access(file, R_OK) == 0 else { return .failure(ReadFailure(String(cString: strerror(errno)))) }
        var st = stat()
        guard stat(file, &st) == 0 else { return .failure(ReadFailure(String(cString: strerror(errno)))) }
        guard (st.st_mode & S_IFMT) == S_IFREG else { return .failure(ReadFailure("not a regular file")) }
        guard st.st_size <= maximumFileSize else {
            return .failure(ReadFailure("larger than \(maximumFileSize / 1024) KiB: not a configuration"))
        }
        guard let data = FileManager.default.contents(atPath: file) else { return .failure(ReadFailure("read failed")) }
        guard let text = String(data: data, encoding: .utf8) else { return .failure(ReadFailure("not UTF-8 text")) }
        return .success(text)
    }

    struct ReadFailure: Error { let reason: String; init(_ r: String) { reason = r } }
}
