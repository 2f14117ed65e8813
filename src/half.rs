//! IEEE half-precision numbers, as model files store weights: the built-in model's
//! converter writes them (`providers::local::convert`), the speech models' converter
//! widens them (`voice::whisper`).

/// The IEEE half-precision number nearest `value` (ties to even), as its bits.
pub fn f32_to_f16(value: f32) -> u16 {
    let bits = value.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exponent = ((bits >> 23) & 0xff) as i32;
    let mantissa = bits & 0x007f_ffff;
    if exponent == 0xff {
        return sign | 0x7c00 | if mantissa != 0 { 0x0200 } else { 0 };
    }
    let half_exponent = exponent - 127 + 15;
    if half_exponent >= 0x1f {
        return sign | 0x7c00;
    }
    let round = |kept: u32, dropped: u32, shift: u32| {
        let halfway = 1u32 << (shift - 1);
        if dropped > halfway || (dropped == halfway && kept & 1 == 1) { kept + 1 } else { kept }
    };
    if half_exponent <= 0 {
        // Below the smallest normal half: a subnormal, or zero.
        if half_exponent < -10 {
            return sign;
        }
        let full = mantissa | 0x0080_0000;
        let shift = (14 - half_exponent) as u32;
        return sign | round(full >> shift, full & ((1 << shift) - 1), shift) as u16;
    }
    // A carry out of the mantissa rightly raises the exponent (to infinity at the top).
    sign | round(((half_exponent as u32) << 10) | (mantissa >> 13), mantissa & 0x1fff, 13) as u16
}

/// The value of the IEEE half-precision number `bits`.
pub fn f16_to_f32(bits: u16) -> f32 {
    let sign = u32::from(bits & 0x8000) << 16;
    let exponent = u32::from((bits >> 10) & 0x1f);
    let mantissa = u32::from(bits & 0x03ff);
    let magnitude = match (exponent, mantissa) {
        (0, 0) => 0,
        (0, m) => return f32::from_bits(sign) + (if sign != 0 { -1.0 } else { 1.0 }) * m as f32 * 2f32.powi(-24),
        (0x1f, m) => 0x7f80_0000 | (m << 13),
        (e, m) => ((e + 127 - 15) << 23) | (m << 13),
    };
    f32::from_bits(sign | magnitude)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_precision_rounds_to_nearest_even() {
        for (value, bits) in [
            (1.0f32, 0x3c00u16),
            (-2.0, 0xc000),
            (0.1, 0x2e66),
            (1.0 / 3.0, 0x3555),
            (65504.0, 0x7bff),
            (65520.0, 0x7c00),
            (2f32.powi(-24), 0x0001),
            (2f32.powi(-26), 0x0000),
            (0.0, 0x0000),
            (-0.0, 0x8000),
            (f32::INFINITY, 0x7c00),
            (1.0 + 2f32.powi(-11), 0x3c00),
            (1.0 + 3.0 * 2f32.powi(-11), 0x3c02),
        ] {
            assert_eq!(f32_to_f16(value), bits, "{value}");
        }
        assert!(f32_to_f16(f32::NAN) & 0x7c00 == 0x7c00 && f32_to_f16(f32::NAN) & 0x3ff != 0);
        for bits in [0x3c00u16, 0xc000, 0x2e66, 0x0001, 0x8001, 0x7bff, 0x0400] {
            assert_eq!(f32_to_f16(f16_to_f32(bits)), bits, "{bits:#06x} survives a round trip");
        }
    }
}
