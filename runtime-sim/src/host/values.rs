//! Host arrays as text, for `cslsim --set` and `--dump`: whitespace- or comma-separated
//! numbers in the exported tensor's element type, `#` starting a comment line. A dump is
//! one line per PE (row-major), so a dump can be given back to `--set`.

use csl_arch::isa::NumTy;

/// Parses `text` into 32-bit host words holding values of type `elem` (floats as their
/// IEEE bits, 16-bit values in the low half). Errors name the first bad number.
pub fn parse(text: &str, elem: NumTy) -> Result<Vec<u32>, String> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.starts_with('#') {
            continue;
        }
        for tok in line.split(|c: char| c.is_whitespace() || c == ',') {
            if tok.is_empty() {
                continue;
            }
            let word = parse_one(tok, elem)
                .ok_or_else(|| format!("line {}: `{tok}` is not a {elem:?} value", n + 1))?;
            out.push(word);
        }
    }
    Ok(out)
}

fn parse_one(tok: &str, elem: NumTy) -> Option<u32> {
    match elem {
        NumTy::F32 => tok.parse::<f32>().ok().map(f32::to_bits),
        NumTy::F16 => tok
            .parse::<f32>()
            .ok()
            .map(|f| u32::from(half::f16::from_f32(f).to_bits())),
        NumTy::Bool => match tok {
            "true" | "1" => Some(1),
            "false" | "0" => Some(0),
            _ => None,
        },
        _ => {
            let v: i64 = match tok.strip_prefix("0x") {
                Some(h) => i64::from_str_radix(h, 16).ok()?,
                None => tok.parse().ok()?,
            };
            let bits = elem.size() * 8;
            let (lo, hi) = if elem.is_signed() {
                (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
            } else {
                (0, (1i64 << bits) - 1)
            };
            (lo..=hi).contains(&v).then_some((v as u32) & mask(bits))
        }
    }
}

fn mask(bits: u32) -> u32 {
    if bits >= 32 {
        u32::MAX
    } else {
        (1 << bits) - 1
    }
}

/// Formats one host word holding a value of type `elem`.
pub fn format_one(word: u32, elem: NumTy) -> String {
    match elem {
        NumTy::F32 => format!("{}", f32::from_bits(word)),
        NumTy::F16 => format!("{}", half::f16::from_bits(word as u16).to_f32()),
        NumTy::I8 => format!("{}", word as u8 as i8),
        NumTy::I16 => format!("{}", word as u16 as i16),
        NumTy::I32 => format!("{}", word as i32),
        NumTy::U8 => format!("{}", word as u8),
        NumTy::U16 => format!("{}", word as u16),
        NumTy::U32 => format!("{word}"),
        NumTy::Bool => format!("{}", word & 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip_through_text() {
        let words = parse("# header\n1.5, -2 3e2\n", NumTy::F32).unwrap_or_default();
        assert_eq!(
            words,
            vec![1.5f32.to_bits(), (-2f32).to_bits(), 300f32.to_bits()]
        );
        assert_eq!(format_one(words[0], NumTy::F32), "1.5");
        assert_eq!(parse("-1 0x7fff", NumTy::I16), Ok(vec![0xffff, 0x7fff]));
        assert_eq!(format_one(0xffff, NumTy::I16), "-1");
        assert!(parse("70000", NumTy::U16).is_err_and(|e| e.contains("`70000`")));
        assert!(parse("1 x", NumTy::F32).is_err_and(|e| e.contains("line 1")));
    }
}
