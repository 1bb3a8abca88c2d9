import FallGuardCore
import FallGuardFieldTest
import Foundation
import Testing
import FallGuardTestSupport

/// Issue 38 item 7: a folder names its own codes; SisFall's names only for SisFall's people.
@Suite struct CodeNamesTests {
    func folder(_ files: [String: String]) throws -> String {
        let dir = temporaryFolder("codes")
        let trial = try String(contentsOfFile: fixtureFolder + "/D07_SE01_R01.csv", encoding: .utf8)
        for (name, text) in files {
            try (text.isEmpty ? trial : text).write(toFile: dir + "/" + name, atomically: true, encoding: .utf8)
        }
        return dir
    }

    @Test func aFolderNamesItsOwnCodes() throws {
        let dir = try folder(["F35_AD03_R01.csv": "", "D16_AD03_R01.csv": "",
                              "codes.csv": "code,activity\n# FallAllD\nF35,fall sliding down a wall (syncope)\nD16, lying down\n"])
        let d = try Dataset.scan(dir)
        #expect(d.codeNames == ["F35": "fall sliding down a wall (syncope)", "D16": "lying down"])
        let e = try Evaluator.evaluate(d, configuration: try DetectorConfiguration(), threads: 1)
        let rows = EvaluationSummary(e, configuration: try DetectorConfiguration(), dataset: dir, includeTrials: false).by_code
        #expect(rows.map(\.description) == ["lying down", "fall sliding down a wall (syncope)"], "\(rows.map(\.description))")
    }

    @Test func anotherLabsFolderWithoutNamesGetsNoneOfSisFalls() throws {
        let d = try Dataset.scan(try folder(["F01_AD01_R01.csv": ""]))
        #expect(d.codeNames.isEmpty, "FallAllD's F01 is no 'forward slip walking'")
        let sisfall = try Dataset.scan(fixtureFolder)
        #expect(sisfall.codeNames["F01"] == "forward slip walking")
        #expect(ActivityCodes.isSisFallSubject("SE06") && !ActivityCodes.isSisFallSubject("AD01") && !ActivityCodes.isSisFallSubject("SA1"))
    }

    @Test func aMalformedCodesFileNamesItsLine() throws {
        let dir = try folder(["F01_AD01_R01.csv": "", "codes.csv": "code,activity\nF01 forward fall\n"])
        #expect {
            _ = try Dataset.scan(dir)
        } throws: { error in
            "\(error)".hasSuffix("codes.csv:2: 'F01 forward fall' is not of the form CODE,ACTIVITY (e.g. F01,forward fall while walking)")
        }
    }
}
