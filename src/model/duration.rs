//! Durations in nets: seconds as a number, or text such as `"90s"`, `"10m"`, `"2h"`, `"3d"`.

use crate::spec::DurationSpec;

/// Parses a duration as nets write them — seconds (`"90"`, `"1.5"`) or a number with
/// a unit (`"500ms"`, `"90s"`, `"10m"`, `"2h"`, `"3d"`) — into whole microseconds.
///
/// ```
/// assert_eq!(ccpn::parse_duration("10m"), Ok(600_000_000));
/// assert_eq!(ccpn::parse_duration("0.5"), Ok(500_000));
/// assert!(ccpn::parse_duration("-1s").is_err());
/// ```
///
/// # Errors
///
/// A message naming the problem: not a number, an unknown unit, negative, too long.
pub fn parse_duration(text: &str) -> Result<i64, String> {
    match text.trim().parse::<f64>() {
        Ok(secs) => micros(&DurationSpec::Secs(secs)),
        Err(_) => micros(&DurationSpec::Text(text.to_owned())),
    }
}

/// The longest duration: 10,000 Gregorian years of 365.2425 days.
const MAX_SECS: f64 = 10_000.0 * 365.2425 * 86_400.0;

/// A duration in whole microseconds, or why it is not one.
pub(crate) fn micros(d: &DurationSpec) -> Result<i64, String> {
    let (secs, shown) = match d {
        DurationSpec::Secs(s) => (*s, format!("{s}")),
        DurationSpec::Text(t) => (parse_text(t)?, format!("{t:?}")),
    };
    if !secs.is_finite() {
        return Err(format!("duration {shown} is not a finite number"));
    }
    if secs < 0.0 {
        return Err(format!("duration {shown} is negative"));
    }
    // Ten thousand years is more than any stream spans.
    if secs > MAX_SECS {
        return Err(format!("duration {shown} is longer than 10,000 years"));
    }
    Ok((secs * 1e6).round() as i64)
}

fn parse_text(t: &str) -> Result<f64, String> {
    let t = t.trim();
    let split = t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("duration {t:?} is not a number followed by ms, s, m, h or d"))?;
    let scale = match unit.trim() {
        "ms" => 1e-3,
        "" | "s" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        "d" => 86_400.0,
        other => {
            return Err(format!(
                "duration {t:?} has unknown unit {other:?} (use ms, s, m, h or d)"
            ))
        }
    };
    Ok(value * scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_duration_is_ten_thousand_years() {
        assert_eq!(MAX_SECS, 315_569_520_000.0);
        assert!(micros(&DurationSpec::Secs(315_569_520_000.0)).is_ok());
        assert!(micros(&DurationSpec::Text("3652425d".into())).is_ok());
        let over = micros(&DurationSpec::Secs(315_569_520_001.0)).unwrap_err();
        assert!(over.contains("longer than 10,000 years"), "{over}");
        assert!(micros(&DurationSpec::Text("3652426d".into())).is_err());
    }

    #[test]
    fn units() {
        let m = |s: &str| micros(&DurationSpec::Text(s.into()));
        assert_eq!(m("90s"), Ok(90_000_000));
        assert_eq!(m("10m"), Ok(600_000_000));
        assert_eq!(m("2h"), Ok(7_200_000_000));
        assert_eq!(m("3d"), Ok(259_200_000_000));
        assert_eq!(m("1.5 s"), Ok(1_500_000));
        assert_eq!(micros(&DurationSpec::Secs(0.25)), Ok(250_000));
        assert!(m("10 parsecs").unwrap_err().contains("unknown unit"));
        assert!(micros(&DurationSpec::Secs(-1.0))
            .unwrap_err()
            .contains("negative"));
        assert!(m("-5m").unwrap_err().contains("negative"));
    }
}
