import CLibGPIOD
import FallGuardCore
import Foundation

/// Which libgpiod a backend runs on: the API, the shared library it was opened from and the
/// version that library reports.
public struct GPIOLibraryInfo: Sendable, Equatable, CustomStringConvertible {
    /// `.v1` (libgpiod 1.x) or `.v2` (libgpiod 2.x).
    public var api: GPIOLibraryChoice
    /// `libgpiod.so.3`
    public var soname: String
    /// `2.1.3`, from the library itself.
    public var version: String

    public init(api: GPIOLibraryChoice, soname: String, version: String) {
        (self.api, self.soname, self.version) = (api, soname, version)
    }

    /// `libgpiod 2.1.3 (libgpiod.so.3, uAPI v2)`
    public var description: String { "libgpiod \(version) (\(soname), uAPI \(api == .v2 ? "v2" : "v1"))" }

}

/// Which libgpiod to open: `auto` (2.x when `libgpiod.so.3` loads, else 1.6), `v1` or `v2`.
/// The words are also the `api` of ``GPIOLibraryInfo``'s JSON.
public enum GPIOLibraryChoice: String, Sendable, Equatable, CaseIterable {
    case auto
    /// libgpiod 1.6 (`libgpiod.so.2`, uAPI v1), only.
    case v1
    /// libgpiod 2.x (`libgpiod.so.3`, uAPI v2), only.
    case v2
}

/// The run-time choice of libgpiod. Neither library is linked: `libgpiod.so.3` (2.x) and
/// `libgpiod.so.2` (1.6) are opened with dlopen, so one build (and one .deb) runs on Debian 12 /
/// Raspberry Pi OS bookworm and on Debian 13 / trixie.
public enum GPIOLibrary {
    /// `auto`: 2.x when `libgpiod.so.3` loads, else 1.6; `v1` / `v2`: that one or an error
    /// saying why it could not be loaded.
    public static func load(_ choice: GPIOLibraryChoice = .auto) throws(GPIOError) -> any GPIOBackend {
        switch choice {
        case .v1: return try LibGPIOD1.load()
        case .v2: return try LibGPIOD2.load()
        case .auto:
            do { return try LibGPIOD2.load() } catch let v2 {
                do { return try LibGPIOD1.load() } catch let v1 {
                    throw GPIOError("no libgpiod found: \(v2.message); \(v1.message) (install libgpiod3 or libgpiod2)")
                }
            }
        }
    }
}

/// dlopen's result, kept for the life of the process (the tables are never freed).
struct LoadedTable<T>: @unchecked Sendable {
    // @unchecked: the table is written once by the loader and only read afterwards.
    let table: UnsafePointer<T>
    let info: GPIOLibraryInfo
}

/// A libgpiod opened through its C loader (`fg_gpiod1_load`, `fg_gpiod2_load`): the table with
/// the library's version as `version` reads it from the table, or why not.
func loadTable<T>(_ soname: String, _ what: String, _ api: GPIOLibraryChoice,
                  _ load: (UnsafePointer<CChar>?, UnsafeMutablePointer<UnsafePointer<CChar>?>?, UnsafeMutablePointer<Int32>?) -> UnsafePointer<T>?,
                  version: (T) -> String) -> Result<LoadedTable<T>, GPIOError> {
    var problem: UnsafePointer<CChar>?
    var missing: Int32 = 0
    guard let t = load(soname, &problem, &missing) else {
        return .failure(loadFailure(soname, what, problem, missingSymbol: missing != 0))
    }
    return .success(LoadedTable(table: t, info: GPIOLibraryInfo(api: api, soname: soname, version: version(t.pointee))))
}

func loadFailure(_ soname: String, _ what: String, _ problem: UnsafePointer<CChar>?, missingSymbol: Bool) -> GPIOError {
    let text = problem.map { String(cString: $0) } ?? "unknown error"
    if missingSymbol { return GPIOError("\(soname) is not \(what): it has no \(text)") }
    return GPIOError("\(soname) (\(what)) cannot be loaded: \(text)")
}

func errnoText(_ err: Int32 = errno) -> String { String(cString: strerror(err)) }
