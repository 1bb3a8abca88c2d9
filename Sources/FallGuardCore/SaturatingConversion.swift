extension FixedWidthInteger {
    /// `value` rounded toward zero and clamped to the type's range; NaN gives 0. For numbers
    /// that come from outside (a file, a device, a clock difference), where `Int(_:)` would trap.
    @inlinable
    public init(saturating value: Double) {
        if value.isNaN {
            self = 0
        } else if value <= Double(Self.min) {
            self = Self.min
        } else if value >= Double(Self.max) {
            self = Self.max
        } else {
            self = Self(value)
        }
    }
}
