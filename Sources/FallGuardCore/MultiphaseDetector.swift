/// The default detector: an impact, then a change of posture and stillness, decided at once
/// after a hard impact and after a longer look after a soft one.
///
/// A candidate is a peak of the 125 ms moving average of |a| (a local maximum over ±1 s) at or
/// above `soft-impact`. Windows in samples at 40 Hz; `c` is the candidate:
///
/// * **Hard impact** (peak ≥ `impact`), decided 2.475 s after the peak (as before):
///   the angle between the mean acceleration vector (gravity) over 2.0–0.5 s before the impact
///   and over 1.0–2.5 s after it is at least `posture-change` (or `strong-posture-change` after
///   a `strong-impact` that came after a descent: the 125 ms mean of |a| fell to
///   `strong-free-fall` in the second before it), and the standard deviation of |a| over
///   1.0–2.5 s after it is at most `stillness`.
/// * **Long look** (a soft impact, `soft-impact` ≤ peak < `impact`, or a hard one whose posture
///   change fell short), only after a fall's **rotation**: the trunk turned at least
///   `look-rotation` within half a second around the impact (250 ms mean vectors 0.5 s apart,
///   the later one ending from 1 s before to 250 ms after the impact). A falling body topples
///   uncontrolled; sitting and lying down on purpose are lowered and turn it 20–45° in half a
///   second (issue 26: the long look's false alarms in daily living). Then the wearer settles
///   within 2.5 s (std |a| over 1.0–2.5 s ≤ `stillness`),
///   then lies or sits still until `look` seconds after the impact: every half second from
///   +2.0 s on has std |a| ≤ `look-stillness`, and every half second from +1.0 s on is tilted at
///   least `look-posture-change` away from the gravity before the impact (`calm-posture-change`
///   after a calm start: std |a| 2.0–0.5 s before the impact ≤ `calm-activity`, someone
///   sitting or standing quietly rather than walking or sitting down). The first half second
///   that fails ends the look. Someone who slumped or slid down stays down; someone who sat or
///   lay down on purpose usually moves again. Decided `look` seconds after the impact (6 s).
///   A slow fall opens the look too (issue 35): a turn of `slow-rotation` within one second
///   when the trunk ended at least `slow-posture-change` from where it was (lying: a fall from
///   a chair ends on the floor), or `calm-slow-posture-change` after a calm start (the older
///   faller's slump out of a chair that ends half lying, 55–65°; sitting down on purpose ends
///   at most about 50° from standing, lying down from walking starts active).
///   A faint while walking opens it too (issue 35): when the wearer walked (``WalkingDetector``'s
///   regular steps) 3–0.5 s before the impact, a turn of `look-rotation-after` between 250 ms
///   means 0.5 s apart within 1.5 s after it, up to 90° (upright to lying; more is the device
///   turned in the hand), when no look is open. The knees give first, so the soft impact comes
///   with the trunk still upright (a turn of 14–32° around it), and the trunk topples after it.
///   Lying down on a bed after walking to it sits first and lies back less abruptly (34° in the
///   dev data that then lies still, 40.5° that moves on); sitting and lying back without steps
///   before is not judged by it. Only where no other rule holds: a fall the moving rule holds is
///   told at once, not after a look.
/// * **Late look** (issue 35): a hard impact (≥ `impact`) after a fall's descent (the 125 ms
///   mean of |a| down to `strong-free-fall` in the second before it) whose wearer went on moving
///   at first (a jogger's trip lands on the hands and knees, then the trunk goes down; the
///   stillness or posture at +1-2.5 s, or the look, failed) is still a fall when the look ends
///   with the trunk down (tilted ≥ `moving-tilt`) and still (std |a| ≤ `look-stillness`) for
///   its last `late-down` seconds. Daily life's hard impacts after a descent (jumping,
///   jogging, stumbling, stairs) do not end lying still; decided `look` seconds after the impact.
///
/// **With a gyroscope** (an MPU6050's samples carry angular velocity), the long look and the
/// moving rule also open on the rotation it measures: a net rotation |Σ ω Δt| of at least
/// `gyro-rotation` within one second around the impact at up to `gyro-peak` or faster. The
/// accelerometer's estimate of the turn blurs a slow fall's rotation (an older person's slump
/// from a chair turns under 55° in half a second as the accelerometer sees it); the gyroscope
/// measures it, while sitting and lying down on purpose are lowered at 100-200 °/s (issue 35).
/// Either measure opens the look: safety first, the gyroscope only adds falls. Without a
/// gyroscope reading the look opens exactly as before.
///
/// **The wall slide** (issue 35): a faint sliding down a wall ends sitting
/// against it, neither upright nor lying, after a soft impact and a slow turn that no rule above
/// takes. How far the hip went down tells it from sitting down: a candidate (peak ≥
/// `soft-impact`, std |a| at +1-2.5 s ≤ `stillness`, posture change 20-60°) whose still period
/// before (the last that ends at or before the impact) and after (the first that starts after
/// it), each within 8 s, frame a drop of `wall-slide` (0.6 m, the midpoint of a low chair's
/// ~0.5 m and the floor's ~0.7 m) to 1.2 m (the hip's height: more is a failed measurement) is
/// a fall. A still second: std |a| < 0.02 g and |ω| < 15 °/s throughout (without a gyroscope,
/// the acceleration vector's std < 0.02 g: a slow turn is no rest). Nothing is computed
/// per sample for it: the ring holds 25.6 s, and once per such candidate the still seconds are
/// found in it and ``HipDrop``'s strapdown pass runs over the buffered samples from the still
/// second before to the still second after, when the one after is complete (without a
/// gyroscope reading on every sample since, an ADXL345: the still test on the acceleration
/// vector and the drop from |a| - g, ``HipDrop/measure(count:accelerometer:)``); it decides only
/// where no other rule does (after the impact's own look, if open), so it only adds detections,
/// within 9 s of the impact (or when its own look ends, at most 15 s). `wall-slide` 0 turns it
/// off.
///
/// **The moving rule** (issue 35): a fall the wearer moves after (gets up from, or struggles on
/// the floor) is the fall's descent (`strong-free-fall` in the second before), an impact of
/// `moving-impact` or more, the fall's turn and at least `moving-down` of the 250 ms means from
/// the impact to +2.5 s tilted `moving-tilt` or more; decided at +2.5 s, whatever follows. The
/// turn is the one around the impact (`look-rotation`, or the gyroscope's gate), or one of
/// `moving-rotation-after` (60°) between two 250 ms means 0.5 s apart within 1.5 s after it: a
/// trip lands on the hands and knees first, and the trunk turns on after the first contact.
///
/// **With a learned upright** (``upright``: gravity while the wearer walks, ``UprightLearner``),
/// an impact softer than `moving-impact` after a trunk that was tilted at least `lying-before`
/// from upright in every half second from 3.5 s to 0.5 s before it is no fall: the wearer was
/// lying already (turning over or rising in bed onto a mattress, issue 35). A fall starts with
/// the trunk upright (standing, walking, sitting); a fall out of bed starts lying but lands
/// harder (≥ `moving-impact` after the drop), and stays a fall. Without an upright nothing changes.
/// **Off by default** (`lying-before` 0; 60 turns it on): it quiets 5 of FallAllD's 719 activities
/// and loses none of its falls, but a softer fall out of a low bed, off a sofa or from a reclined
/// chair (under 1.6 g after the trunk lay back) would be dropped, and the dev data has no such
/// fall to show it cannot happen. Safety first: a false alarm in bed before a missed fall.
///
/// Every feature is a magnitude, an angle between two mean vectors or a deviation of the
/// magnitude, so the sensor's mounting and axis convention do not matter (the learned upright
/// is the wearer's own gravity in the sensor's axes, whatever the mounting).
///
/// Defaults from leave-one-subject-out cross-validation on SisFall (Sucerquia et al., Sensors
/// 17(1):198, 2017); see `bench/detector-cv.sh` and `tools/detector-research/` (softlook.py).
/// O(1) work per sample: a 5-sample sum; once per half second
/// during a look, one pass over 20 buffered samples; when a candidate is due, one bounded pass
/// over at most 180 (a wall slide's candidate: a search over at most 420 and two passes over at
/// most 720, and one still second per sample while it waits for the one after). No allocation
/// except when it fires.
public struct MultiphaseDetector: FallDetector {
    public static let name = "multiphase"
    public static let summary = "smoothed impact, posture change and stillness; a longer look after a soft impact (default)"
    public static let parameters = declared.map(\.parameter)
    /// Every setting with the property it is read into (nil: derived in ``init(settings:name:gyroAlone:)``):
    /// each key is written once, beside its default. Computed (key paths are not `Sendable`):
    /// `parameters` keeps its result, and each initialiser reads it once.
    private static var declared: [(parameter: DetectorParameter, property: WritableKeyPath<MultiphaseDetector, Double>?)] { [
        (DetectorParameter("impact", 2.0, 1.0...16.0, "g", "peak of the 125 ms mean of |a| that is decided at once, 2.5 s after the impact"), \.impact),
        (DetectorParameter("posture-change", 40.0, 0.0...180.0, "deg", "angle between gravity 2-0.5 s before and 1-2.5 s after a hard impact"), \.postureChange),
        (DetectorParameter("stillness", 0.40, 0.0...4.0, "g", "largest std of |a| 1-2.5 s after the impact"), \.stillness),
        (DetectorParameter("strong-impact", 2.6, 1.0...16.0, "g", "an impact this strong needs only strong-posture-change"), \.strongImpact),
        (DetectorParameter("strong-posture-change", 20.0, 0.0...180.0, "deg", "posture change that suffices after a strong impact"), \.strongPostureChange),
        (DetectorParameter("strong-free-fall", 0.85, 0.0...1.5, "g", "a strong impact with less than posture-change needs the 125 ms mean of |a| this low in the second before it"), \.strongFreeFall),
        (DetectorParameter("soft-impact", 1.4, 1.0...16.0, "g", "smallest peak of the 125 ms mean of |a| that opens a long look"), \.softImpact),
        (DetectorParameter("look", 6.0, 2.5...15.0, "s", "length of the long look after a soft impact (whole half seconds)"), nil),
        (DetectorParameter("look-stillness", 0.08, 0.0...4.0, "g", "largest std of |a| in each half second of the look from +2 s"), \.lookStillness),
        (DetectorParameter("look-posture-change", 35.0, 0.0...180.0, "deg", "smallest tilt from the pre-impact gravity in each half second of the look"), \.lookPostureChange),
        (DetectorParameter("calm-posture-change", 30.0, 0.0...180.0, "deg", "the tilt that suffices in the look after a calm start (a slump from sitting)"), \.calmPostureChange),
        (DetectorParameter("calm-activity", 0.10, 0.0...4.0, "g", "largest std of |a| 2-0.5 s before the impact that is a calm start"), \.calmActivity),
        (DetectorParameter("look-rotation", 55.0, 0.0...180.0, "deg", "smallest turn of the trunk within half a second around a soft impact that opens a long look"), \.lookRotation),
        (DetectorParameter("slow-rotation", 50.0, 0.0...180.0, "deg", "a slow fall: smallest turn of the trunk within one second around a soft impact that opens a long look when the posture changed at least slow-posture-change"), \.slowRotation),
        (DetectorParameter("slow-posture-change", 65.0, 0.0...180.0, "deg", "a slow fall: the posture change (1-2.5 s after the impact) that lets slow-rotation open the long look"), \.slowPostureChange),
        (DetectorParameter("calm-slow-posture-change", 55.0, 0.0...180.0, "deg", "a slow fall after a calm start (calm-activity: sitting or standing quietly): the posture change that lets slow-rotation open the long look"), \.calmSlowPostureChange),
        (DetectorParameter("moving-impact", 1.6, 1.0...16.0, "g", "a fall the wearer moves after: smallest peak of the 125 ms mean of |a|"), \.movingImpact),
        (DetectorParameter("moving-tilt", 60.0, 0.0...180.0, "deg", "a fall the wearer moves after: the tilt from the pre-impact gravity that counts as down"), \.movingTilt),
        (DetectorParameter("moving-down", 1.0, 0.25...2.5, "s", "a fall the wearer moves after: time down (tilted at least moving-tilt) within 2.5 s of the impact"), nil),
        (DetectorParameter("moving-rotation-after", 60.0, 0.0...180.0, "deg", "a fall the wearer moves after whose trunk turned on after the first contact (a trip lands on the hands, then goes down): smallest turn between 250 ms means 0.5 s apart within 1.5 s after the impact, in place of the turn around it; 0 turns it off"), \.movingRotationAfter),
        (DetectorParameter("look-rotation-after", 40.0, 0.0...180.0, "deg", "a faint while walking (the knees give, then the trunk topples): after the wearer walked (steps) 3-0.5 s before a soft impact, smallest turn between 250 ms means 0.5 s apart within 1.5 s after it (at most 90 deg) that opens a long look; 0 turns it off"), \.lookRotationAfter),
        (DetectorParameter("late-down", 2.0, 0.0...6.0, "s",
                            "a hard impact after a descent that did not settle at once: time down (tilted at least moving-tilt) and still (look-stillness) at the end of the look that makes it a fall; 0 turns it off"), nil),
        (DetectorParameter("refractory", 10.0, 0.0...120.0, "s", "quiet time after a detection, so one fall is one event; it ends once the wearer is up again (the alarm's recovery test)"), nil),
        (DetectorParameter("gyro-rotation", 40.0, 0.0...360.0, "deg",
                            "with a gyroscope: smallest net rotation it measures within 1 s around an impact that opens a long look"), nil),
        (DetectorParameter("gyro-peak", 200.0, 0.0...2000.0, "deg/s",
                            "with a gyroscope: smallest peak |w| from 1 s before to 250 ms after the impact that opens a long look"), nil),
        (DetectorParameter("lying-before", 0.0, 0.0...180.0, "deg",
                            "with a learned upright: an impact under moving-impact after the trunk was at least this far from upright in every half second 3.5-0.5 s before it (lying in bed) is no fall; 0 (the default) turns it off, 60 quiets turning over in bed"), \.lyingBefore),
        (DetectorParameter("wall-slide", 0.6, 0.0...HipDrop.cap, "m",
                            "a soft impact that leaves the trunk neither upright nor lying (posture change 20-60 deg) after the hip went down at least this far (at most 1.2 m) between the still seconds before and after it is a fall (a faint sliding down a wall); 0 turns it off"), \.wallSlide),
    ] }

    // Fixed structure, in samples at 40 Hz.
    static let ring = 1024           // power of two > the wall slide's reach: 2 × (8 + 1) s plus its decision
    static let smoothing = 5         // 125 ms moving average of |a|
    static let peakHalfWindow = 40   // the impact is the largest smoothed |a| within ±1 s
    static let preStart = 80         // pre-impact gravity: [c-80, c-20), 2.0 to 0.5 s before
    static let preEnd = 20
    static let postStart = 40        // post-impact gravity and stillness: [c+40, c+100)
    static let postEnd = 100
    static let block = 20            // the long look is judged in half seconds from c+40
    static let lookSettleBlocks = 2  // the first second of the look (+1.0…+2.0 s) may still settle
    static let freeFallBelow = 0.6   // g, smoothed |a| that is reported as a free-fall phase
    // The trunk's turn around the impact: 250 ms mean vectors half a second apart, the later one
    // ending from 1 s before the impact to 250 ms after it (the turn a fall ends with).
    static let turnAverage = 10
    static let turnSpan = 20
    static let turnFrom = 40
    static let turnTo = 10
    /// The gyroscope's turn: net rotation over this many samples (1 s), ending in the same span.
    static let gyroSpan = 40
    static let gravity = 9.80665     // m/s² per g, for the reported descent velocity
    /// The slow turn: 250 ms mean vectors one second apart, in the same span as the turn.
    static let slowTurnSpan = 40
    /// The moving rule counts the 250 ms means from the impact to +2.5 s that are down.
    static let downBlock = 10
    /// The 250 ms means after the impact in which the moving rule looks for a turn: 1.5 s.
    static let afterBlocks = 6
    static let lyingStart = 140      // lying before: half seconds (every 250 ms) from c-140 to c-20
    static let walkFrom = 120        // walking before: steps from c-120 to c-20 (3 to 0.5 s before)
    static let walkMean = 40         // the step counter's 1 s mean of |a|, filled first
    /// The most a trunk topples after a faint's impact: from upright to lying. A larger turn in
    /// half a second after a soft impact is the device turned in the hand (taken off after a
    /// walk: HAPT U01 exp2, 112°), not the body.
    static let toppleLimit = 90.0
    /// The wall slide: a still second has std |a| under `stillStd` and |ω| under `stillRate`
    /// throughout; the still periods before and after the impact are each within `slideReach`
    /// (8 s) of it; the posture change at +1-2.5 s is `slideUpright` to `slideLying` (the
    /// wearer ends neither upright nor lying: sitting against the wall).
    static let stillStd = 0.02, stillRate = 15.0
    static let slideReach = 320
    static let slideUpright = 20.0, slideLying = 60.0
    static let slidePending = 8      // candidates waiting for the still period after (≥ 1 s apart)

    // The settings read by key (``declared``): set once, in the initialiser.
    private var impact = 0.0, postureChange = 0.0, stillness = 0.0
    private var strongImpact = 0.0, strongPostureChange = 0.0, strongFreeFall = 0.0
    private var softImpact = 0.0, lookStillness = 0.0, lookPostureChange = 0.0
    private var calmPostureChange = 0.0, calmActivity = 0.0, lookRotation = 0.0
    private var slowRotation = 0.0, slowPostureChange = 0.0, calmSlowPostureChange = 0.0
    private var movingImpact = 0.0, movingTilt = 0.0, movingRotationAfter = 0.0
    private var lyingBefore = 0.0
    private var lookRotationAfter = 0.0
    /// Counts the steps before a candidate impact (`look-rotation-after`); reset for each.
    private var steps = WalkingDetector()
    /// The wall slide's smallest drop (m; 0: off).
    private var wallSlide = 0.0
    private let lookSamples: Int, movingDownBlocks: Int
    /// Half seconds down and still that end a late look (0: no late look).
    private let lateBlocks: Int
    /// The wearer's upright trunk: gravity in the sensor's axes (any length) while walking,
    /// learned by an ``UprightLearner`` (the daemon's, or `evaluate`'s from the subject's other
    /// recordings). Nil until known; then `lying-before` does nothing.
    public var upright: (x: Double, y: Double, z: Double)?
    private let refractorySamples: Int
    /// The catalogue name its detections carry (`sixaxis` runs this detector with a gyroscope).
    private let name: String
    /// With a gyroscope: the net rotation (degrees) and the peak |ω| (°/s) that open the look.
    private let gyroGate: (rotation: Double, peakRate: Double)
    /// Whether the gyroscope's gate replaces the accelerometer's turn (``SixAxisDetector``)
    /// rather than standing beside it.
    private let gyroAlone: Bool

    /// One buffered sample: acceleration (g), |a|, the 125 ms mean of |a| ending there, its
    /// time, and angular velocity (°/s; 0 without a gyroscope reading). One array of them, so a
    /// sample costs one store (one uniqueness and one bounds check), not nine.
    private struct Slot {
        var x = 0.0, y = 0.0, z = 0.0, m = 0.0, s = 0.0, t = 0.0, gx = 0.0, gy = 0.0, gz = 0.0
    }
    private var slots: [Slot]
    /// The newest sample that came without a gyroscope reading (-1: none yet).
    private var lastWithoutGyro = -1
    private var n = 0
    private var refractoryUntil = -1
    /// The newest impact a detection was made for: a wall slide of that impact or an older one
    /// never fires again (with a `refractory` shorter than the slide's wait it could).
    private var lastFiredImpact = -1
    /// After a detection, while its refractory time runs: the alarm's own test of whether the
    /// wearer is up again (``RecoveryWatch``). A fall the wearer got up from must not hide the
    /// next fall behind its refractory time: up again ends it, so every impact whose decision
    /// comes from then on is judged (a superset of what the full refractory time judges).
    private var recovery: RecoveryWatch?
    /// Whether `recovery` is set: tested on every sample instead of the optional (whose
    /// comparison with nil copied the watch).
    private var watching = false

    /// An impact's tier, as its detection names it: an enumeration, not a string, so that an
    /// open look is plain data (its copies retain and release nothing).
    private enum Tier: String { case strong = "strong-impact", hard = "impact", soft = "soft-impact" }

    /// What the event reports about an impact, taken while its samples are still buffered.
    private struct Impact {
        var c: Int, peak: Double, tier: Tier, angle: Double, still: Double, rotation: Rotation
        var rawPeak: Double, impactTime: Double, freeFall: Double, preActivity: Double, descent: Double
        var before: (x: Double, y: Double, z: Double) = (0, 0, 0)
        /// Seconds down (tilted at least moving-tilt) from the impact to +2.5 s.
        var down: Double = 0
        /// The moving rule's turn after the impact, when that (not the turn around it) let it hold.
        var rotationAfter: Double? = nil
    }
    /// The long look in progress, if any.
    private struct Look {
        var impact: Impact
        var before: (x: Double, y: Double, z: Double)
        var minTilt: Double, maxBlockStd: Double
        /// The tilt every half second needs: look-posture-change, or calm-posture-change after a calm start.
        var tiltNeeded: Double, calm: Bool
        /// The moving rule held for this impact: if the look fails because the wearer moves,
        /// it is still a fall (one the wearer may get up from).
        var moving: Bool
        /// The turn after the impact (degrees) that opened the look after a walking start
        /// (`look-rotation-after`), when neither the turn around it nor the slow turn did.
        var toppled: Double?
        /// A hard impact after a descent: if the wearer moved at first (the look failed or never
        /// opened), the look goes on as a late look, a fall if its last `late-down` seconds are
        /// down and still.
        var lateEligible = false
        /// The look failed (or never opened) and only its end can still make it a fall.
        var late = false
        /// Consecutive half seconds so far tilted at least moving-tilt with std |a| ≤ look-stillness.
        var downRun = 0
        var c: Int { impact.c }
    }
    private var look: Look? { didSet { lookImpact = look?.c ?? -1 } }
    /// The late look in progress, if any: kept apart, so that a later candidate's look does not
    /// end it (the wearer who rolled on after the first contact moves again by definition).
    private var lateLook: Look? { didSet { lateLookImpact = lateLook?.c ?? -1 } }
    /// The impacts of `look` and `lateLook` (-1: none), kept by their observers: a sample tells
    /// whether an open look is due from these, without reading the optional looks.
    private var lookImpact = -1, lateLookImpact = -1

    /// While candidates wait: whether the second ending at the previous sample was still.
    private var previousStill = false
    /// A wall slide candidate: the impact, the end of the still period before it (A's last
    /// second is [a1 - 40, a1)), and its drop once the still second after it is known.
    private struct Slide { var c: Int, a1: Int, impact: Impact, drop = 0.0, time = 0.0 }
    /// Candidates waiting for the still period after their impact (fixed capacity, oldest first).
    private var slides: [Slide]
    private var waitingSlides = 0
    /// A measured slide that is a fall, waiting only while its impact's own look is open (-1: none).
    private var dueSlide = noSlide
    private static let noSlide = Slide(c: -1, a1: 0, impact: Impact(c: -1, peak: 0, tier: .soft, angle: 0, still: 0,
        rotation: Rotation(accelerometer: 0, slow: 0, gyro: nil, fast: false), rawPeak: 0, impactTime: 0, freeFall: 0, preActivity: 0, descent: 0))

    public init(settings: DetectorSettings = DetectorSettings(parameters: parameters)) {
        self.init(settings: settings, name: Self.name, gyroAlone: false)
    }

    /// `gyroAlone`: with a gyroscope, the long look opens on its gate (`gyro-rotation`,
    /// `gyro-peak`) instead of, not beside, `look-rotation` estimated from the accelerometer
    /// (which still decides where the samples around an impact have no gyroscope reading).
    init(settings: DetectorSettings, name: String, gyroAlone: Bool) {
        self.name = name
        gyroGate = (settings["gyro-rotation"], settings["gyro-peak"])
        self.gyroAlone = gyroAlone
        // Whole half seconds, at least the 2.5 s of the fast decision.
        lookSamples = max(Self.postEnd, Int((settings["look"] * detectorRate / Double(Self.block)).rounded()) * Self.block)
        movingDownBlocks = max(1, Int((settings["moving-down"] * detectorRate / Double(Self.downBlock)).rounded()))
        lateBlocks = Int((settings["late-down"] * detectorRate / Double(Self.block)).rounded())
        slides = [Slide](repeating: Self.noSlide, count: Self.slidePending)
        refractorySamples = Int((settings["refractory"] * detectorRate).rounded())
        slots = [Slot](repeating: Slot(), count: Self.ring)
        for (parameter, property) in Self.declared {
            if let property { self[keyPath: property] = settings[parameter.key] }
        }
    }

    public mutating func learnedUpright(_ gravity: (x: Double, y: Double, z: Double)?) { upright = gravity }

    /// Forgets the stream (not the learned upright, which belongs to the wearer).
    public mutating func reset() {
        n = 0
        lastWithoutGyro = -1
        refractoryUntil = -1
        lastFiredImpact = -1
        recovery = nil
        watching = false
        look = nil
        lateLook = nil
        waitingSlides = 0
        dueSlide.c = -1
    }

    /// The smallest peak that is a candidate at all.
    private var candidateFloor: Double { min(softImpact, impact) }

    @inline(__always) private func m(_ i: Int) -> Double { slots[i & (Self.ring - 1)].m }
    @inline(__always) private func s(_ i: Int) -> Double { slots[i & (Self.ring - 1)].s }

    public mutating func process(_ sample: AccelerationSample) -> FallSuspected? {
        let t = n
        let k = t & (Self.ring - 1)
        let magnitude = sample.magnitude
        var slot = Slot(x: sample.x, y: sample.y, z: sample.z, m: magnitude, s: 0, t: sample.time)
        if let g = sample.gyro {
            (slot.gx, slot.gy, slot.gz) = (g.x, g.y, g.z)
        } else {
            lastWithoutGyro = t
        }
        // Through the buffer's pointer: an index masked by ring - 1 is in bounds by construction,
        // so the five accesses need no bounds checks.
        slots.withUnsafeMutableBufferPointer { ring in
            if t >= Self.smoothing - 1 {
                // Summed directly (not a running sum) so long uptimes accumulate no rounding drift;
                // oldest first, this sample last.
                var acc = 0.0
                for j in (t - Self.smoothing + 1)..<t { acc += ring[j & (Self.ring - 1)].m }
                acc += magnitude
                slot.s = acc / Double(Self.smoothing)
            }
            ring[k] = slot
        }
        n = t + 1
        if watching { watchRecovery(sample, now: t) }
        if waitingSlides > 0 { stillSecondEnds(now: t) }

        // An open look is judged once per half second: between those samples it is not touched
        // (not even copied: a look is some 200 bytes).
        if lateLookImpact >= 0, Self.endsBlock(t, ofLookAt: lateLookImpact) {
            var l = lateLook
            let e = advance(&l, now: t)
            lateLook = l
            if let e { return e }
        }
        if lookImpact >= 0, Self.endsBlock(t, ofLookAt: lookImpact) {   // after the late look: one that fails now moves there, judged from the next block
            var l = look
            let e = advance(&l, now: t)
            if let turned = l, turned.late { (look, lateLook) = (nil, turned) } else { look = l }
            if let e { return e }
        }
        let c = t - (Self.postEnd - 1)   // the candidate whose fast decision is due now
        if c >= 0, t >= refractoryUntil, s(c) >= candidateFloor, let e = judge(candidate: c, now: t) { return e }
        return dueSlide.c >= 0 ? decideSlide(now: t) : nil
    }

    /// Feeds the watch begun by the last detection while its refractory time runs; up again
    /// ends the refractory time at once.
    private mutating func watchRecovery(_ sample: AccelerationSample, now t: Int) {
        if t >= refractoryUntil {   // the refractory time is over: nothing left to end
            recovery = nil
            watching = false
        } else if recovery?.process(sample) == true {   // up again: it ends now
            refractoryUntil = t
            recovery = nil
            watching = false
        }
    }

    // MARK: The wall slide (issue 35): how far the hip went down

    /// Whether the second of buffered samples from `j` is still: std |a| under `stillStd` and
    /// every |ω| under `stillRate`; where a sample since `j` came without a gyroscope reading,
    /// the std of the acceleration vector under `stillStd` instead of the gyroscope's test (a
    /// slow turn keeps |a| constant but not its direction). 40 buffered samples.
    /// Called for every sample while a candidate waits: |a| first, the axes only for a second
    /// that |a| calls still and that lacks a gyroscope reading.
    private func isStillSecond(from j: Int) -> Bool {
        var sums = StillSums()
        for i in j..<(j + HipDrop.still) {
            let q = slots[i & (Self.ring - 1)]
            if Self.isTurning(q) { return false }
            sums.addMagnitude(q, 1)
        }
        guard sums.isStill(alone: false) else { return false }
        guard lastWithoutGyro >= j else { return true }
        for i in j..<(j + HipDrop.still) { sums.addAxes(slots[i & (Self.ring - 1)], 1) }
        return sums.isStill(alone: true)
    }

    /// Sums over one second of buffered samples for the still test: of |a| and |a|², and of each
    /// axis and its square (the vector's std, for samples without a gyroscope).
    private struct StillSums {
        var m = 0.0, mm = 0.0, x = 0.0, xx = 0.0, y = 0.0, yy = 0.0, z = 0.0, zz = 0.0

        @inline(__always) mutating func add(_ q: Slot, _ sign: Double) {
            addMagnitude(q, sign)
            addAxes(q, sign)
        }

        @inline(__always) mutating func addMagnitude(_ q: Slot, _ sign: Double) {
            m += sign * q.m; mm += sign * q.m * q.m
        }

        @inline(__always) mutating func addAxes(_ q: Slot, _ sign: Double) {
            x += sign * q.x; xx += sign * q.x * q.x
            y += sign * q.y; yy += sign * q.y * q.y
            z += sign * q.z; zz += sign * q.z * q.z
        }

        /// std |a| under `stillStd` and, `alone` (no gyroscope), the vector's std too (the
        /// per-axis variances summed): a turn of 4 °/s or more over the second fails it.
        func isStill(alone: Bool) -> Bool {
            let n = Double(HipDrop.still), limit = stillStd * stillStd
            func variance(_ s: Double, _ ss: Double) -> Double { ss / n - (s / n) * (s / n) }
            guard variance(m, mm) < limit else { return false }
            return !alone || variance(x, xx) + variance(y, yy) + variance(z, zz) < limit
        }
    }

    /// A sample turning at `stillRate` or faster (a NaN reading counts as turning).
    @inline(__always) private static func isTurning(_ q: Slot) -> Bool {
        !(q.gx * q.gx + q.gy * q.gy + q.gz * q.gz < stillRate * stillRate)
    }


    /// A candidate the wall slide may decide (a soft impact that left the trunk neither upright
    /// nor lying): its still period before (the last that
    /// ends at or before the impact, within 8 s), measured at once if the still period after has
    /// begun, else kept until it does. Nothing is computed per sample for it before: the still
    /// seconds are found by one backward pass over at most 360 buffered samples (sliding sums)
    /// and one forward look over 60 seconds' starts, once per such candidate.
    private mutating func registerSlide(_ impact: Impact, now t: Int) {
        let c = impact.c, w = HipDrop.still
        var a1 = -1
        // Seconds from j = c - 39 down: sums slide by one sample; a second is still while no
        // sample in it turns (the lowest turning sample seen so far lies above it).
        var sums = StillSums(), lowestTurning = Int.max
        let lowest = max(0, c - Self.slideReach - w)
        // The axes' sums only where a sample of the search lacks a gyroscope reading.
        let axes = lastWithoutGyro >= lowest
        func add(_ i: Int, _ sign: Double) {
            let q = slots[i & (Self.ring - 1)]
            if axes { sums.add(q, sign) } else { sums.addMagnitude(q, sign) }
            if sign > 0, Self.isTurning(q) { lowestTurning = min(lowestTurning, i) }
        }
        func still(_ j: Int) -> Bool { lowestTurning >= j + w && sums.isStill(alone: lastWithoutGyro >= j) }
        var j = c - w + 1
        guard j - 1 >= 0 else { return }
        for i in j..<(j + w) { add(i, 1) }
        var above = still(j)   // the second from j + 1 when j is judged
        while j - 1 >= lowest {
            j -= 1
            add(j, 1); add(j + w, -1)
            let here = still(j)
            if here && !above { a1 = j + w; break }
            above = here
        }
        guard a1 >= 0 else { return }
        let slide = Slide(c: c, a1: a1, impact: impact)
        previousStill = isStillSecond(from: c)
        for b in (c + 1)...(t - w + 1) {
            let here = isStillSecond(from: b)
            if here && !previousStill {
                measure(slide, after: b)
                return
            }
            previousStill = here
        }
        if waitingSlides == Self.slidePending {   // full (cannot happen: peaks are 1 s apart): drop the oldest
            for i in 1..<waitingSlides { slides[i - 1] = slides[i] }
            waitingSlides -= 1
        }
        slides[waitingSlides] = slide
        waitingSlides += 1
    }

    /// Called for each sample while candidates wait: a still period that starts with the second
    /// that is complete now is the one after them (the first after each impact); candidates whose
    /// 8 s passed without one are dropped.
    private mutating func stillSecondEnds(now t: Int) {
        let b = t - HipDrop.still + 1
        let here = isStillSecond(from: b)
        let startsPeriod = here && !previousStill
        previousStill = here
        var kept = 0
        for i in 0..<waitingSlides where b - slides[i].c <= Self.slideReach {
            if startsPeriod { measure(slides[i], after: b) } else { slides[kept] = slides[i]; kept += 1 }
        }
        waitingSlides = kept
    }

    /// The drop from the still second before to the first still second after (`b0`), over the
    /// buffered samples; a drop of `wall-slide` to 1.2 m makes the candidate due.
    private mutating func measure(_ slide: Slide, after b0: Int) {
        let a0 = slide.a1 - HipDrop.still, count = b0 + HipDrop.still - a0
        guard dueSlide.c < 0, slide.c > lastFiredImpact else { return }
        // With a gyroscope reading on every sample since A began: strapdown; else |a| - g.
        let drop = lastWithoutGyro < a0
            ? HipDrop.measure(count: count) { i in
                let q = slots[(a0 + i) & (Self.ring - 1)]
                return (SIMD3(q.x, q.y, q.z), SIMD3(q.gx, q.gy, q.gz))
            }
            : HipDrop.measure(count: count, accelerometer: { i in
                let q = slots[(a0 + i) & (Self.ring - 1)]
                return SIMD3(q.x, q.y, q.z)
            })
        guard drop >= wallSlide, drop <= HipDrop.cap else { return }
        dueSlide = slide
        dueSlide.drop = drop
        dueSlide.time = Double(b0 - slide.a1) / detectorRate
    }

    /// A measured wall slide fires unless another detection came first (the refractory time) or
    /// its impact's own look is still open (that look decides first; the slide fires if it fails).
    private mutating func decideSlide(now t: Int) -> FallSuspected? {
        guard t >= refractoryUntil, dueSlide.c > lastFiredImpact else { dueSlide.c = -1; return nil }
        let c = dueSlide.c
        guard lookImpact != c, lateLookImpact != c else { return nil }
        dueSlide.c = -1
        refractoryUntil = t + refractorySamples
        return event(dueSlide.impact, now: t, rule: .wallSlide(drop: dueSlide.drop, time: dueSlide.time))
    }

    /// Std of |a| over `range` (two-pass, population) and the sum of its vectors.
    /// The sum of the buffered acceleration vectors over `range` (a mean's direction).
    @inline(__always) private func vectorSum(_ range: Range<Int>) -> (x: Double, y: Double, z: Double) {
        var v = (x: 0.0, y: 0.0, z: 0.0)
        for j in range {
            let q = j & (Self.ring - 1)
            v.x += slots[q].x; v.y += slots[q].y; v.z += slots[q].z
        }
        return v
    }

    private func window(_ range: Range<Int>) -> (std: Double, x: Double, y: Double, z: Double) {
        var sum = 0.0
        let v = vectorSum(range)
        for j in range { sum += m(j) }
        let count = Double(range.count)
        let mean = sum / count
        var variance = 0.0
        for j in range {
            let d = m(j) - mean
            variance += d * d
        }
        return ((variance / count).squareRoot(), v.x, v.y, v.z)
    }

    private mutating func judge(candidate c: Int, now t: Int) -> FallSuspected? {
        let peak = s(c)
        // A local maximum, strict on the left and not exceeded on the right. The nearest
        // neighbours first: a candidate on a slope (most of them) fails there at once.
        if c > 0, s(c - 1) >= peak { return nil }
        if s(c + 1) > peak { return nil }
        for j in max(0, c - Self.peakHalfWindow)..<c where s(j) >= peak { return nil }
        for j in (c + 1)...(c + Self.peakHalfWindow) where s(j) > peak { return nil }

        let p0 = max(0, c - Self.preStart), p1 = c - Self.preEnd
        guard p1 > p0 else { return nil }   // an impact in the first 0.525 s cannot be judged
        if peak < movingImpact, wasLying(before: c) { return nil }
        var before = (x: 0.0, y: 0.0, z: 0.0)
        for j in p0..<p1 {
            let q = j & (Self.ring - 1)
            before.x += slots[q].x; before.y += slots[q].y; before.z += slots[q].z
        }
        let post = window((c + Self.postStart)..<(c + Self.postEnd))
        let still = post.std
        let angle = angleDegrees(before, (post.x, post.y, post.z))
        let rotation = self.rotation(around: c)
        let freeFall = self.freeFall(before: c)   // once per candidate: the rules and the report share it

        // Hard impact: decided now. A strong impact that leaves the trunk less than
        // posture-change tilted (kneeling, half sitting) must come after a fall's descent:
        // stamping, jumping or dropping onto a seat has no free-fall phase before the impact.
        let hard = peak >= impact
        let strong = peak >= strongImpact
        let tier: Tier = strong ? .strong : hard ? .hard : .soft
        // The wall slide: measured once the still period after the impact is known; it decides
        // only if no rule below does (``decideSlide(now:)``).
        if wallSlide > 0, peak >= softImpact, still <= stillness, angle >= Self.slideUpright, angle < Self.slideLying {
            registerSlide(describe(c, now: t, tier: tier, angle: angle, still: still, rotation: rotation, freeFall: freeFall,
                                   pre: p0..<p1, before: before), now: t)
        }
        if hard, still <= stillness,
           angle >= postureChange || (strong && angle >= strongPostureChange && freeFall <= strongFreeFall) {
            refractoryUntil = t + refractorySamples
            return event(describe(c, now: t, tier: tier, angle: angle, still: still, rotation: rotation, freeFall: freeFall,
                                  pre: p0..<p1, before: before), now: t, rule: .fast)
        }
        // A fall the wearer moves after (gets up from, or struggles on the floor): a fall's
        // descent, impact and turn, then down for a while, whatever follows. The alarm's
        // countdown decides later whether the wearer got up (a recovered fall).
        let down = downTime(after: c, before: before)
        let descentAndDown = peak >= movingImpact && freeFall <= strongFreeFall
            && down >= Double(movingDownBlocks * Self.downBlock) / detectorRate
        // The fall's turn: around the impact (toppling), or after a trip's first contact, when the
        // trunk goes down on the hands and knees and then turns on (FallAllD's trips with recovery).
        let after = descentAndDown && !rotation.fast && movingRotationAfter > 0 ? rotationAfter(c) : nil
        let turnedAfter = after.flatMap { $0 >= movingRotationAfter ? $0 : nil }
        let moving = descentAndDown && (rotation.fast || turnedAfter != nil)
        // Otherwise a long look, if the wearer settled, the trunk turned as in a fall (sitting
        // or lying down on purpose turns it slower, or a slow fall turned far and ended lying)
        // and the half seconds so far qualify.
        // A calm start (sitting or standing quietly, not walking or sitting down) needs less tilt:
        // someone who slumps from sitting may end only 30° from where they were, and a slow fall
        // from a chair may end half sitting on the floor.
        let calmStart = window(p0..<p1).std <= calmActivity
        let slowNeeded = calmStart ? min(calmSlowPostureChange, slowPostureChange) : slowPostureChange
        let slowTurn = rotation.slow >= slowRotation && angle >= slowNeeded
        let settled = peak >= softImpact && still <= stillness
        // A faint while walking: the knees give first, so the soft impact comes with the trunk
        // still upright, and the trunk topples after it, to lying at most. Only where no other
        // rule holds (a fall the moving rule holds is told at once, not after a look) and no look
        // is open (it does not displace a look that may still fire).
        var toppled: Double? = nil
        if settled, !moving, !rotation.fast, !slowTurn, let turn = toppleTurn(after: c, measured: after),
           Self.walked(in: slots, before: c, counting: &steps) {
            toppled = turn
        }
        let opens = settled && (rotation.fast || slowTurn || toppled != nil)
        // A hard impact after a fall's descent whose wearer went on moving at first (rolled, slid
        // or toppled after the first contact: the posture or the stillness at +1-2.5 s failed)
        // is still a fall if the look ends with the trunk down and still: a late look.
        let lateEligible = lateBlocks > 0 && hard && freeFall <= strongFreeFall
        guard opens || (lateEligible && !moving) else {
            return moving ? movingEvent(c, now: t, tier: tier, angle: angle, still: still, rotation: rotation, freeFall: freeFall,
                                                pre: p0..<p1, before: before, down: down, after: turnedAfter) : nil
        }
        let calm = calmStart && calmPostureChange < lookPostureChange
        var candidate = Look(impact: Impact(c: c, peak: peak, tier: .soft, angle: angle, still: still, rotation: rotation, rawPeak: 0,
                                            impactTime: 0, freeFall: 0, preActivity: 0, descent: 0),
                             before: before, minTilt: .infinity, maxBlockStd: 0,
                             tiltNeeded: calm ? calmPostureChange : lookPostureChange, calm: calm, moving: moving,
                             toppled: toppled)
        candidate.lateEligible = lateEligible
        candidate.late = !opens
        var b = 0
        while c + Self.postStart + (b + 1) * Self.block <= t + 1 {
            if !check(block: b, of: &candidate) {
                if moving {
                    return movingEvent(c, now: t, tier: tier, angle: angle, still: still, rotation: rotation, freeFall: freeFall,
                                       pre: p0..<p1, before: before, down: down, after: turnedAfter)
                }
                guard lateEligible else { return nil }
                candidate.late = true
            }
            b += 1
        }
        candidate.impact = describe(c, now: t, tier: tier == .strong ? .hard : tier, angle: angle, still: still, rotation: rotation,
                                    freeFall: freeFall, pre: p0..<p1, before: before)
        candidate.impact.down = down
        candidate.impact.rotationAfter = turnedAfter
        if c + lookSamples - 1 <= t { return finish(candidate, now: t) }   // a look no longer than the fast decision
        // A later candidate replaces an open look (it moved, so that look would fail), and a
        // later late look an older one.
        if candidate.late {
            lateLook = candidate
        } else {
            // A look the moving rule already holds is a fall whatever follows: replaced, it is told now.
            let replaced = look
            look = candidate
            if let replaced, replaced.moving {
                refractoryUntil = t + refractorySamples
                return event(replaced.impact, now: t, rule: .moving)
            }
        }
        return nil
    }

    /// The moving rule's detection, decided now.
    private mutating func movingEvent(_ c: Int, now t: Int, tier: Tier, angle: Double, still: Double, rotation: Rotation,
                                      freeFall: Double, pre: Range<Int>, before: (x: Double, y: Double, z: Double),
                                      down: Double, after: Double?) -> FallSuspected {
        refractoryUntil = t + refractorySamples
        var i = describe(c, now: t, tier: tier, angle: angle, still: still, rotation: rotation, freeFall: freeFall, pre: pre, before: before)
        i.down = down
        i.rotationAfter = after
        return event(i, now: t, rule: .moving)
    }

    /// The trunk tilted at least `lying-before` from the learned upright in every half second
    /// (stepped by 250 ms) from 3.5 s to 0.5 s before `c`: the wearer was lying before the
    /// impact. False without an upright, with `lying-before` 0, or with no whole half second.
    /// At most 11 means of 20 buffered samples, once per candidate.
    private func wasLying(before c: Int) -> Bool {
        guard let up = upright, lyingBefore > 0 else { return false }
        var j = max(0, c - Self.lyingStart), any = false
        while j + Self.block <= c - Self.preEnd {
            if angleDegrees(up, vectorSum(j..<(j + Self.block))) < lyingBefore { return false }
            any = true
            j += Self.block / 2
        }
        return any
    }

    /// Whether the wearer walked (``WalkingDetector``: three regular steps, the last within 1 s) at
    /// some sample from 3 s to 0.5 s before `c`: the counter reads the buffered samples from 4 s
    /// before (its first second fills its mean of |a|), so steps from 4 s before count. At most
    /// 140 samples, once per candidate that needs it; the counter is reset in place, no allocation.
    private static func walked(in slots: [Slot], before c: Int, counting walking: inout WalkingDetector) -> Bool {
        walking.reset()
        var walked = false
        for j in max(0, c - walkFrom - walkMean)..<(c - preEnd) {
            let q = slots[j & (ring - 1)]
            if walking.process(AccelerationSample(time: q.t, x: q.x, y: q.y, z: q.z)), j >= c - walkFrom { walked = true }
        }
        return walked
    }

    /// The largest turn between 250 ms means 0.5 s apart, from the impact to +1.5 s (the
    /// moving rule's turn after a trip's first contact). Six means of buffered samples.
    private func rotationAfter(_ c: Int) -> Double {
        var best = 0.0
        var twoBack = (x: 0.0, y: 0.0, z: 0.0), oneBack = twoBack
        for b in 0..<Self.afterBlocks {
            let v = vectorSum((c + b * Self.downBlock)..<(c + (b + 1) * Self.downBlock))
            if b >= 2 { best = max(best, angleDegrees(twoBack, v)) }
            (twoBack, oneBack) = (oneBack, v)
        }
        return best
    }

    /// Seconds from the impact at `c` to +2.5 s in which the 250 ms mean is tilted at least
    /// `moving-tilt` from the gravity `before` it: the time the wearer was down. Ten blocks,
    /// one pass over 100 buffered samples.
    private func downTime(after c: Int, before: (x: Double, y: Double, z: Double)) -> Double {
        var blocks = 0
        for b in 0..<(Self.postEnd / Self.downBlock) {
            let v = vectorSum((c + b * Self.downBlock)..<(c + (b + 1) * Self.downBlock))
            if angleDegrees(before, v) >= movingTilt { blocks += 1 }
        }
        return Double(blocks * Self.downBlock) / detectorRate
    }

    /// Checks half second `b` of a look (samples [c+40+20b, c+60+20b)); false when it fails.
    /// It also counts the half seconds down and still in a row, which decide a late look.
    private func check(block b: Int, of l: inout Look) -> Bool {
        let start = l.c + Self.postStart + b * Self.block
        let w = window(start..<(start + Self.block))
        let tilt = angleDegrees(l.before, (w.x, w.y, w.z))
        if l.lateEligible {
            l.downRun = tilt >= movingTilt && w.std <= lookStillness ? l.downRun + 1 : 0
        }
        if l.late { return true }
        guard tilt >= l.tiltNeeded else { return false }
        if b >= Self.lookSettleBlocks {
            guard w.std <= lookStillness else { return false }
            l.maxBlockStd = max(l.maxBlockStd, w.std)
        }
        l.minTilt = min(l.minTilt, tilt)
        return true
    }

    /// Whether sample `t` completes a half second of the look after the impact at `c`.
    @inline(__always) private static func endsBlock(_ t: Int, ofLookAt c: Int) -> Bool {
        let offset = t + 1 - (c + postStart)
        return offset > 0 && offset % block == 0
    }

    /// Advances an open look (`look` or `lateLook`) at a sample that ends one of its half
    /// seconds (``endsBlock(_:ofLookAt:)``); fires when it completes.
    private mutating func advance(_ slot: inout Look?, now t: Int) -> FallSuspected? {
        guard var l = slot else { return nil }
        guard t >= refractoryUntil else { slot = nil; return nil }
        if !check(block: (t + 1 - (l.c + Self.postStart)) / Self.block - 1, of: &l) {
            // The wearer moved: no long look, but still a fall if the moving rule held, or
            // perhaps a late one after a hard impact.
            if l.moving {
                slot = nil
                refractoryUntil = t + refractorySamples
                return event(l.impact, now: t, rule: .moving)
            }
            guard l.lateEligible else { slot = nil; return nil }
            l.late = true
        }
        if t >= l.c + lookSamples - 1 {
            slot = nil
            return finish(l, now: t)
        }
        slot = l
        return nil
    }

    /// A look that reached its end: a fall, unless it went late and did not end down and still
    /// for `late-down`.
    private mutating func finish(_ l: Look, now t: Int) -> FallSuspected? {
        guard !l.late || l.downRun >= lateBlocks else { return nil }
        refractoryUntil = t + refractorySamples
        return lookEvent(l, now: t)
    }

    private mutating func lookEvent(_ l: Look, now t: Int) -> FallSuspected {
        event(l.impact, now: t, rule: .look(l))
    }

    /// The decision still due at this point of the stream, if any: an open long look, or a
    /// confirmed candidate (the largest smoothed |a| within ±1 s, so at least 1 s old) whose
    /// fast decision has not come yet and whose settling window so far is quiet enough.
    /// A peak less than 1 s old is not yet known to be an impact, so nothing is due for it.
    public var openDecision: OpenDecision? {
        // A late look is due only while the trunk lies still and the look has time left for
        // late-down: a jogger's stride after a hard landing is no decision in waiting.
        if let l = look {
            return OpenDecision(impactTime: time(l.c), dueTime: dueTime(l.c + lookSamples - 1), rule: "long-look")
        }
        if let l = lateLook, l.downRun > 0, l.downRun + (l.c + lookSamples - n) / Self.block >= lateBlocks {
            return OpenDecision(impactTime: time(l.c), dueTime: dueTime(l.c + lookSamples - 1), rule: "long-look")
        }
        let last = n - 1
        // Oldest first: the candidate the fast decision reaches next.
        let first = max(Self.preEnd + 1, last - (Self.postEnd - 2))
        guard last - Self.peakHalfWindow >= first else { return nil }
        for c in first...(last - Self.peakHalfWindow) {
            let peak = s(c)
            guard peak >= candidateFloor else { continue }
            var isPeak = true
            for j in max(0, c - Self.peakHalfWindow)..<c where s(j) >= peak { isPeak = false; break }
            if isPeak {
                for j in (c + 1)...(c + Self.peakHalfWindow) where s(j) > peak { isPeak = false; break }
            }
            guard isPeak else { continue }
            if peak < movingImpact, wasLying(before: c) { continue }
            // A soft impact whose turn was no fall's opens no look, unless the wearer walked and
            // the trunk may still topple after it. (The moving rule may still take it, if the trunk
            // turns on after it; like every moving candidate, that is not counted as a decision in
            // waiting.)
            if peak < impact, !rotation(around: c).mayOpenLook(slowRotation), !mayTopple(after: c, last: last) { continue }
            let settled = c + Self.postStart
            if last - settled + 1 >= 2, window(settled..<(last + 1)).std > stillness { continue }
            let due = c + (peak >= impact ? Self.postEnd - 1 : lookSamples - 1)
            return OpenDecision(impactTime: time(c), dueTime: dueTime(due), rule: peak >= impact ? "fast" : "long-look")
        }
        return nil
    }

    /// Whether the turn after the impact at `c` opens its look (`look-rotation-after`), with the
    /// stream ending at `last`: the wearer walked before it, and the trunk turned far enough in
    /// the 1.5 s after it. Until those 1.5 s are in, no (a soft impact while walking is common;
    /// counting each as a decision in waiting called 23 FallAllD activities too short).
    private func mayTopple(after c: Int, last: Int) -> Bool {
        guard c + Self.afterBlocks * Self.downBlock - 1 <= last, toppleTurn(after: c) != nil else { return false }
        var counter = steps   // at a stream's end only: a copy of the detector's step counter
        return Self.walked(in: slots, before: c, counting: &counter)
    }

    /// The turn after the impact at `c` (``rotationAfter(_:)``, or `measured` if it was taken
    /// already) when it may open a look after a walk: from `look-rotation-after` to
    /// ``toppleLimit``, with no look or late look open (it never displaces one). Nil otherwise.
    private func toppleTurn(after c: Int, measured: Double? = nil) -> Double? {
        guard lookRotationAfter > 0, look == nil, lateLook == nil else { return nil }
        let turn = measured ?? rotationAfter(c)
        return turn >= lookRotationAfter && turn <= Self.toppleLimit ? turn : nil
    }

    private func time(_ i: Int) -> Double { slots[i & (Self.ring - 1)].t }
    /// Stream time of a future sample index, extrapolated at 40 Hz from the newest sample.
    private func dueTime(_ i: Int) -> Double { time(n - 1) + Double(i - (n - 1)) / detectorRate }

    /// The lowest 125 ms mean of |a| in the second up to the impact at `c`: near 1 g when the
    /// wearer was not falling, well below it in a fall's descent.
    private func freeFall(before c: Int) -> Double {
        var lowest = Double.infinity
        for j in max(0, c - Self.peakHalfWindow)...c { lowest = min(lowest, s(j)) }
        return lowest
    }

    /// How far the trunk turned around the impact at `c`: the accelerometer's estimate
    /// (``turn(around:)``) and, when every sample of the span carried one, the gyroscope's
    /// (``gyroTurn(around:)``), which then decides whether a soft impact opens the long look.
    struct Rotation {
        var accelerometer: Double
        /// The accelerometer's turn over one second (a slow fall's).
        var slow: Double
        var gyro: (degrees: Double, peakRate: Double)?
        /// The trunk turned as in a fall: `look-rotation` in half a second or the gyroscope's
        /// gate (the gate alone for ``SixAxisDetector``).
        var fast: Bool

        /// Whether the long look may open, before the posture change is known.
        func mayOpenLook(_ slowRotation: Double) -> Bool { fast || slow >= slowRotation }
    }

    private func rotation(around c: Int) -> Rotation {
        let accelerometer = turn(around: c, span: Self.turnSpan)
        let slow = turn(around: c, span: Self.slowTurnSpan)
        let oldest = c - Self.turnFrom - Self.gyroSpan + 1
        guard oldest >= 0, lastWithoutGyro < oldest else {
            return Rotation(accelerometer: accelerometer, slow: slow, gyro: nil, fast: accelerometer >= lookRotation)
        }
        let g = gyroTurn(around: c)
        let gyroFast = g.degrees >= gyroGate.rotation && g.peakRate >= gyroGate.peakRate
        return Rotation(accelerometer: accelerometer, slow: slow, gyro: g, fast: gyroFast || (!gyroAlone && accelerometer >= lookRotation))
    }

    /// The gyroscope's measure of the turn: the largest net rotation |Σ ω Δt| over
    /// ``gyroSpan`` samples (1 s) ending from 1 s before to 250 ms after the impact (degrees), and
    /// the largest |ω| from 1 s before to 250 ms after it (°/s). The gyroscope sees the rotation itself, which the
    /// accelerometer's mean vectors blur with the impact and with the body's own acceleration;
    /// its zero-rate offset (a few °/s) adds at most a degree or two over the span. One sliding
    /// sum, 51 steps, no allocation.
    private func gyroTurn(around c: Int) -> (degrees: Double, peakRate: Double) {
        let first = c - Self.turnFrom, last = c + Self.turnTo
        var sum = (0.0, 0.0, 0.0)
        var peak = 0.0
        for j in (first - Self.gyroSpan + 1)...first {
            let q = j & (Self.ring - 1)
            sum.0 += slots[q].gx; sum.1 += slots[q].gy; sum.2 += slots[q].gz
        }
        var largest = 0.0
        for t1 in first...last {
            let q = t1 & (Self.ring - 1)
            if t1 > first {
                let d = (t1 - Self.gyroSpan) & (Self.ring - 1)
                sum.0 += slots[q].gx - slots[d].gx; sum.1 += slots[q].gy - slots[d].gy; sum.2 += slots[q].gz - slots[d].gz
            }
            largest = max(largest, sum.0 * sum.0 + sum.1 * sum.1 + sum.2 * sum.2)
            peak = max(peak, slots[q].gx * slots[q].gx + slots[q].gy * slots[q].gy + slots[q].gz * slots[q].gz)
        }
        return (largest.squareRoot() / detectorRate, peak.squareRoot())
    }

    /// The largest turn of the trunk, in degrees, within half a second around the impact at `c`:
    /// the angle between 250 ms mean vectors 0.5 s apart, the later one ending from 1 s before
    /// to 250 ms after the impact. A fall ends in an uncontrolled rotation (an upright body
    /// topples at 150-250 deg/s near the ground); sitting or lying down on purpose is lowered
    /// under control and turns the trunk 20-45 deg in such half a second. Both sums slide by one
    /// sample per step: 51 steps, one square root each, one arc cosine at the end, no allocation.
    private func turn(around c: Int, span: Int) -> Double {
        let first = max(c - Self.turnFrom, span + Self.turnAverage - 1)
        let last = c + Self.turnTo
        guard first <= last else { return 0 }
        func vector(_ i: Int) -> (Double, Double, Double) { let q = i & (Self.ring - 1); return (slots[q].x, slots[q].y, slots[q].z) }
        var late = (0.0, 0.0, 0.0), early = (0.0, 0.0, 0.0)
        for j in (first - Self.turnAverage + 1)...first {
            let v = vector(j), u = vector(j - span)
            late.0 += v.0; late.1 += v.1; late.2 += v.2
            early.0 += u.0; early.1 += u.1; early.2 += u.2
        }
        var lowest = 1.0
        for t1 in first...last {
            if t1 > first {
                let add = vector(t1), drop = vector(t1 - Self.turnAverage)
                late.0 += add.0 - drop.0; late.1 += add.1 - drop.1; late.2 += add.2 - drop.2
                let addE = vector(t1 - span), dropE = vector(t1 - span - Self.turnAverage)
                early.0 += addE.0 - dropE.0; early.1 += addE.1 - dropE.1; early.2 += addE.2 - dropE.2
            }
            let norms = ((late.0 * late.0 + late.1 * late.1 + late.2 * late.2) * (early.0 * early.0 + early.1 * early.1 + early.2 * early.2)).squareRoot()
            guard norms > 0 else { continue }
            lowest = min(lowest, (late.0 * early.0 + late.1 * early.1 + late.2 * early.2) / norms)
        }
        return degrees(cosine: lowest)
    }

    /// The informational measurements of an impact at `c` (all its samples are still buffered).
    private func describe(_ c: Int, now t: Int, tier: Tier, angle: Double, still: Double, rotation: Rotation, freeFall: Double,
                          pre: Range<Int>, before: (x: Double, y: Double, z: Double)) -> Impact {
        // The smoothed peak ends its 125 ms window; the impact itself is the largest raw |a| in it.
        var rawPeak = 0.0, rawPeakIndex = c
        for j in max(0, c - Self.smoothing + 1)...c where m(j) > rawPeak {
            rawPeak = m(j)
            rawPeakIndex = j
        }
        var preSum = 0.0
        for j in pre { preSum += m(j) }
        let preMean = preSum / Double(pre.count)
        var preVar = 0.0
        for j in pre { preVar += (m(j) - preMean) * (m(j) - preMean) }
        // Descent velocity (after Bourke et al., J Biomech 2010, on |a| so it needs no axis):
        // |a| minus its pre-impact mean, integrated over the second before the impact; the most
        // negative value, in m/s. Reported, not decided on (see tools/detector-research/FINDINGS.md).
        var v = 0.0, vMin = 0.0
        for j in max(0, c - Self.peakHalfWindow)...c {
            v += (m(j) - preMean) * Self.gravity / detectorRate
            vMin = min(vMin, v)
        }
        return Impact(c: c, peak: s(c), tier: tier, angle: angle, still: still, rotation: rotation, rawPeak: rawPeak,
                      impactTime: time(rawPeakIndex), freeFall: freeFall,
                      preActivity: (preVar / Double(pre.count)).squareRoot(), descent: vMin, before: before)
    }

    /// Which rule decided: the fast one, the long look, or the moving rule.
    private enum Rule {
        case fast
        case look(Look)
        case moving
        /// How far the hip went down (m) and in what time (s, between the still seconds).
        case wallSlide(drop: Double, time: Double)
    }

    private mutating func event(_ i: Impact, now t: Int, rule: Rule) -> FallSuspected {
        lastFiredImpact = max(lastFiredImpact, i.c)
        var phases: [String] = []
        if i.freeFall < Self.freeFallBelow { phases.append("free-fall") }
        phases.append(i.tier.rawValue)
        if case .moving = rule {
            phases.append(i.rotationAfter == nil ? "rotation" : "rotation-after")
            phases.append("down")
            phases.append("moving")
        } else {
            phases.append("posture-change")
            phases.append("stillness")
        }
        var features = [
            DetectionFeature("impact", i.peak, "g"),
            DetectionFeature("peak", i.rawPeak, "g"),
            DetectionFeature("posture-change", i.angle, "deg"),
            DetectionFeature("stillness", i.still, "g"),
            DetectionFeature("rotation", i.rotation.accelerometer, "deg"),
        ]
        if let g = i.rotation.gyro {
            features.append(DetectionFeature("gyro-rotation", g.degrees, "deg"))
            features.append(DetectionFeature("peak-angular-velocity", g.peakRate, "deg/s"))
        }
        if case .moving = rule {
            features.append(DetectionFeature("down", i.down, "s"))
            if let after = i.rotationAfter { features.append(DetectionFeature("rotation-after", after, "deg")) }
        }
        if case let .wallSlide(drop, time) = rule {
            phases.append("wall-slide")
            features.append(DetectionFeature("drop", drop, "m"))
            features.append(DetectionFeature("drop-time", time, "s"))
        }
        if case let .look(l) = rule, l.late {
            phases.append("long-look")
            phases.append("late-down")
            features.append(DetectionFeature("look", Double(t - i.c + 1) / detectorRate, "s"))
            features.append(DetectionFeature("late-down", Double(l.downRun * Self.block) / detectorRate, "s"))
        } else if case let .look(l) = rule {
            // The calm start was needed: for the look's tilt, or for the slow turn's posture.
            if l.calm && (l.minTilt < lookPostureChange || (!i.rotation.fast && i.angle < slowPostureChange)) {
                phases.append("calm-start")
            }
            if let after = l.toppled {   // the turn after the impact after a walk opened it
                phases.append("walking-start")
                phases.append("topple-after")
                features.append(DetectionFeature("topple-after", after, "deg"))
            } else if !i.rotation.fast {   // the slow turn opened it
                phases.append("slow-rotation")
                features.append(DetectionFeature("slow-rotation", i.rotation.slow, "deg"))
            }
            phases.append("rotation")
            phases.append("long-look")
            features.append(DetectionFeature("look", Double(t - i.c + 1) / detectorRate, "s"))
            features.append(DetectionFeature("look-posture-change", l.minTilt, "deg"))
            features.append(DetectionFeature("look-stillness", l.maxBlockStd, "g"))
        }
        features.append(DetectionFeature("free-fall-min", i.freeFall, "g"))
        features.append(DetectionFeature("pre-impact-activity", i.preActivity, "g"))
        features.append(DetectionFeature("descent-velocity", i.descent, "m/s"))
        var d = FallSuspected(
            detector: name,
            impactTime: i.impactTime,
            decisionTime: time(t),
            peak: i.rawPeak,
            phases: phases,
            features: features)
        d.gravityBefore = [i.before.x, i.before.y, i.before.z]
        recovery = RecoveryWatch(after: d)
        watching = recovery != nil
        return d
    }
}
