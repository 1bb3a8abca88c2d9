import FallGuardCore

/// One plot of a stretch of signal as inline SVG, the same wherever a person looks at why the
/// detector fired or not (the field-test report, and a page served by the bridge): |a| and its
/// 125 ms mean (the multiphase detector's smoothed magnitude), the detector's thresholds on |a|,
/// each detection's impact window and decision, and labelled moments; where the samples carry a
/// gyroscope's reading, |ω| too, on a scale of its own (°/s, right).
public struct SignalPlot: Sendable {
    public struct Mark: Sendable {
        public var time: Double
        public var text: String
        public init(time: Double, text: String) { (self.time, self.text) = (time, text) }
    }

    public var samples: [AccelerationSample]
    public var from: Double
    public var to: Double
    public var detections: [FallSuspected] = []
    public var marks: [Mark] = []
    /// Horizontal lines: a setting's name and its value in g.
    public var thresholds: [(name: String, g: Double)] = []
    public var width = 640
    public var height = 170

    public init(samples: [AccelerationSample], from: Double, to: Double) {
        (self.samples, self.from, self.to) = (samples, from, to)
    }

    /// The thresholds on |a| among a detector's settings: those in g of 1 or more.
    public static func thresholds(of configuration: DetectorConfiguration) -> [(name: String, g: Double)] {
        configuration.settings.parameters.filter { $0.unit == "g" && configuration.settings[$0.key] >= 1 }
            .map { ($0.key, configuration.settings[$0.key]) }
    }

    /// Samples averaged for the 125 ms mean at 40 Hz.
    static let meanLength = 5

    public func svg() -> String {
        let left = 34.0, bottom = 18.0
        let plotW = Double(width) - left - 4, plotH = Double(height) - bottom - 4
        let inside = samples.filter { $0.time >= from && $0.time <= to }
        let peak = max(4, (inside.map(\.magnitude).max() ?? 0) * 1.1, (thresholds.map(\.g).max() ?? 0) * 1.1)
        let top = min(peak, 20.0)
        let span = max(to - from, 1e-3)
        func x(_ t: Double) -> Double { left + (t - from) / span * plotW }
        func y(_ g: Double) -> Double { 4 + plotH - min(max(g, 0), top) / top * plotH }
        func n(_ v: Double) -> String { fixedDecimal(v, digits: 1) }
        var out = "<svg class=\"plot\" width=\"\(width)\" height=\"\(height)\" viewBox=\"0 0 \(width) \(height)\">"
        out += "<rect x=\"\(n(left))\" y=\"4\" width=\"\(n(plotW))\" height=\"\(n(plotH))\" fill=\"#fff\" stroke=\"#bbb\"/>"
        for d in detections {   // the impact's ±1 s, then what was watched until the decision
            out += "<rect class=\"impact-window\" x=\"\(n(x(d.impactTime - 1)))\" y=\"4\" width=\"\(n(x(d.impactTime + 1) - x(d.impactTime - 1)))\" height=\"\(n(plotH))\" fill=\"#fdd\"/>"
            out += "<rect class=\"decision-window\" x=\"\(n(x(d.impactTime + 1)))\" y=\"4\" width=\"\(n(max(0, x(d.decisionTime) - x(d.impactTime + 1))))\" height=\"\(n(plotH))\" fill=\"#ddf\"/>"
            out += "<line x1=\"\(n(x(d.decisionTime)))\" x2=\"\(n(x(d.decisionTime)))\" y1=\"4\" y2=\"\(n(4 + plotH))\" stroke=\"#33c\" stroke-dasharray=\"3 2\"><title>decision at \(n(d.decisionTime)) s: \(htmlEscaped(d.reason))</title></line>"
        }
        var g = 0.0
        while g <= top {   // grid every g
            out += "<text x=\"\(n(left - 4))\" y=\"\(n(y(g) + 3))\" font-size=\"9\" text-anchor=\"end\">\(Int(g))</text>"
            g += top > 10 ? 2 : 1
        }
        for t in thresholds {
            out += "<line class=\"threshold\" x1=\"\(n(left))\" x2=\"\(n(left + plotW))\" y1=\"\(n(y(t.g)))\" y2=\"\(n(y(t.g)))\" stroke=\"#c60\" stroke-dasharray=\"4 3\"/>"
            out += "<text x=\"\(n(left + plotW - 2))\" y=\"\(n(y(t.g) - 2))\" font-size=\"9\" text-anchor=\"end\" fill=\"#c60\">\(htmlEscaped(t.name)) \(fixedDecimal(t.g, digits: 2)) g</text>"
        }
        out += "<path class=\"magnitude\" fill=\"none\" stroke=\"#999\" stroke-width=\"0.8\" d=\"\(path(inside.map(\.magnitude), inside, x, y))\"/>"
        let means = movingMean(inside.map(\.magnitude))
        out += "<path class=\"mean\" fill=\"none\" stroke=\"#000\" stroke-width=\"1.2\" d=\"\(path(means, inside, x, y))\"/>"
        // |ω| on its own scale: the stretch's samples that carry a gyroscope's reading.
        let turning = inside.filter { $0.gyro != nil }
        let rates = turning.map { $0.gyro!.magnitude }
        let topRate = rates.isEmpty ? 0 : max(250, min((rates.max() ?? 0) * 1.1, 2500))
        if !rates.isEmpty {
            func yRate(_ v: Double) -> Double { 4 + plotH - min(max(v, 0), topRate) / topRate * plotH }
            out += "<path class=\"angular-velocity\" fill=\"none\" stroke=\"#a0a\" stroke-width=\"0.9\" d=\"\(path(rates, turning, x, yRate))\"/>"
            let step = topRate > 1000 ? 500.0 : topRate > 500 ? 200 : 100
            var r = step
            while r <= topRate {
                out += "<text x=\"\(n(left + plotW - 2))\" y=\"\(n(yRate(r) + 3))\" font-size=\"9\" text-anchor=\"end\" fill=\"#a0a\">\(Int(r))</text>"
                r += step
            }
        }
        for m in marks {
            out += "<line class=\"mark\" x1=\"\(n(x(m.time)))\" x2=\"\(n(x(m.time)))\" y1=\"4\" y2=\"\(n(4 + plotH))\" stroke=\"#090\"/>"
            out += "<text x=\"\(n(x(m.time) + 2))\" y=\"14\" font-size=\"9\" fill=\"#090\">\(htmlEscaped(m.text))</text>"
        }
        out += "<text x=\"\(n(left))\" y=\"\(height - 4)\" font-size=\"9\">\(n(from)) s</text>"
        out += "<text x=\"\(n(left + plotW))\" y=\"\(height - 4)\" font-size=\"9\" text-anchor=\"end\">\(n(to)) s (|a| in g: grey; 125 ms mean: black"
            + (rates.isEmpty ? "" : "; |ω| in °/s, right: purple") + ")</text>"
        return out + "</svg>"
    }

    /// At most one point per pixel column (the column's extreme), as a compact relative path.
    private func path(_ values: [Double], _ s: [AccelerationSample], _ x: (Double) -> Double, _ y: (Double) -> Double) -> String {
        guard !values.isEmpty else { return "" }
        var points: [(Int, Int)] = []
        for (i, v) in values.enumerated() {
            let px = Int(x(s[i].time).rounded()), py = Int(y(v).rounded())
            if let last = points.last, last.0 == px {
                if py < last.1 { points[points.count - 1].1 = py }   // keep the peak of the column
            } else {
                points.append((px, py))
            }
        }
        var d = "M\(points[0].0) \(points[0].1)"
        for (a, b) in zip(points, points.dropFirst()) { d += "l\(b.0 - a.0) \(b.1 - a.1)" }
        return d
    }

    private func movingMean(_ v: [Double]) -> [Double] {
        var out = [Double](repeating: 0, count: v.count), sum = 0.0
        for i in v.indices {
            sum += v[i]
            if i >= Self.meanLength { sum -= v[i - Self.meanLength] }
            out[i] = sum / Double(min(i + 1, Self.meanLength))
        }
        return out
    }
}

/// Text made safe for HTML and SVG: file names and notes come from outside.
public func htmlEscaped(_ s: String) -> String {
    var out = ""
    out.reserveCapacity(s.count)
    for c in s {
        switch c {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        case "'": out += "&#39;"
        default: out.append(c)
        }
    }
    return out
}
