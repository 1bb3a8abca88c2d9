import Foundation

/// The files of `fuzz/corpus/<target>` (seeds and the inputs fuzzing found), by name, sorted:
/// the regression tests feed each to the parser the target fuzzes.
public func fuzzCorpus(_ target: String) -> [(name: String, bytes: [UInt8])] {
    let folder = repositoryRoot + "/fuzz/corpus/" + target
    let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
    return names.sorted().compactMap { name in
        FileManager.default.contents(atPath: folder + "/" + name).map { (name, [UInt8]($0)) }
    }
}
