//! [`Timestamp`], an instant of event time: its range, its arithmetic, and the one
//! place where times are read from and written as text.
//!
//! Rounding: a time given in seconds ([`Timestamp::from_secs_f64`]) is rounded to the
//! nearest microsecond, halves away from zero; an RFC 3339 time
//! ([`Timestamp::parse_rfc3339`]) to the nearest microsecond, halves towards the
//! future. Written out, a time is exact: [`Timestamp::to_rfc3339`] shows every
//! microsecond it holds (and no trailing zeros), [`Timestamp::as_secs_f64`] is the
//! nearest `f64`, which JSON shows as the shortest decimal that reads back to it.

use std::fmt;

use serde::{Serialize, Serializer};

/// An instant of event time, in whole microseconds since the Unix epoch.
///
/// Integer time keeps windows exact (`0.4 - 0.1` fits a window of `0.3`) and makes
/// periodic ticks `t0 + k·T` land exactly. It spans the years 0001–9999.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Timestamp(i64);

/// Microseconds since the epoch of 0001-01-01T00:00:00Z.
const MIN_MICROS: i64 = -62_135_596_800 * 1_000_000;
/// Microseconds since the epoch of 9999-12-31T23:59:59.999999Z.
const MAX_MICROS: i64 = 253_402_300_800 * 1_000_000 - 1;

impl Timestamp {
    /// The earliest representable instant (0001-01-01T00:00:00Z).
    pub const MIN: Timestamp = Timestamp(MIN_MICROS);
    /// The latest representable instant (9999-12-31T23:59:59.999999Z).
    pub const MAX: Timestamp = Timestamp(MAX_MICROS);

    /// Builds a timestamp from microseconds since the epoch, if it lies in the years 0001–9999.
    ///
    /// ```
    /// use ccpn::Timestamp;
    /// assert_eq!(Timestamp::from_micros(1_500_000).unwrap().as_secs_f64(), 1.5);
    /// assert!(Timestamp::from_micros(i64::MAX).is_none());
    /// ```
    pub fn from_micros(us: i64) -> Option<Timestamp> {
        (MIN_MICROS..=MAX_MICROS)
            .contains(&us)
            .then_some(Timestamp(us))
    }

    /// Builds a timestamp from (fractional) seconds since the epoch, rounded to the
    /// microsecond, if it is finite and lies in the years 0001–9999.
    ///
    /// ```
    /// use ccpn::Timestamp;
    /// assert_eq!(Timestamp::from_secs_f64(0.1).unwrap().micros(), 100_000);
    /// assert!(Timestamp::from_secs_f64(f64::NAN).is_none());
    /// assert!(Timestamp::from_secs_f64(1e300).is_none());
    /// ```
    pub fn from_secs_f64(secs: f64) -> Option<Timestamp> {
        if !secs.is_finite() {
            return None;
        }
        let us = (secs * 1e6).round();
        if us < MIN_MICROS as f64 || us > MAX_MICROS as f64 {
            return None;
        }
        Timestamp::from_micros(us as i64)
    }

    /// Builds a timestamp from whole seconds since the epoch, if it lies in the years
    /// 0001–9999.
    ///
    /// ```
    /// use ccpn::Timestamp;
    /// assert_eq!(Timestamp::from_secs(-2).unwrap().micros(), -2_000_000);
    /// assert!(Timestamp::from_secs(i64::MAX).is_none());
    /// ```
    pub fn from_secs(secs: i64) -> Option<Timestamp> {
        secs.checked_mul(1_000_000).and_then(Timestamp::from_micros)
    }

    /// Reads an RFC 3339 time (`2024-01-01T00:00:00.25+02:00`), rounded to the nearest
    /// microsecond (halves towards the future).
    ///
    /// ```
    /// use ccpn::Timestamp;
    /// let t = Timestamp::parse_rfc3339("1970-01-01T00:00:01.0000005Z").unwrap();
    /// assert_eq!(t.micros(), 1_000_001);
    /// assert!(Timestamp::parse_rfc3339("yesterday").is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// [`TimeError::NotRfc3339`] if the text is not an RFC 3339 time (one without an
    /// offset or `Z` is not), [`TimeError::OutOfRange`] if it lies outside the years
    /// 0001–9999.
    pub fn parse_rfc3339(text: &str) -> Result<Timestamp, TimeError> {
        let nanos = match text.parse::<jiff::Timestamp>() {
            Ok(ts) => ts.as_nanosecond(),
            // jiff's instants end late on 30 December 9999 (so that any offset keeps
            // them in its civil range); ccpn's end with the year. Read the rest from
            // the text's parts.
            Err(e) => late_nanos(text).ok_or_else(|| TimeError::NotRfc3339 {
                reason: e.to_string(),
            })?,
        };
        let micros = (nanos + 500).div_euclid(1000);
        i64::try_from(micros)
            .ok()
            .and_then(Timestamp::from_micros)
            .ok_or(TimeError::OutOfRange)
    }

    /// Civil time `dt` read in UTC (a time written without a zone), rounded to the
    /// microsecond like [`Timestamp::parse_rfc3339`]; `None` outside the years
    /// 0001–9999.
    pub(crate) fn from_civil_utc(dt: jiff::civil::DateTime) -> Option<Timestamp> {
        let micros = (civil_nanos(dt) + 500).div_euclid(1000);
        i64::try_from(micros).ok().and_then(Timestamp::from_micros)
    }

    /// This instant as RFC 3339 text in UTC, as detections show a time computed from
    /// times given as text: exact to the microsecond, without trailing zeros.
    ///
    /// ```
    /// use ccpn::Timestamp;
    /// let t = Timestamp::from_micros(1_704_067_200_250_000).unwrap();
    /// assert_eq!(t.to_rfc3339(), "2024-01-01T00:00:00.25Z");
    /// assert_eq!(Timestamp::from_secs(0).unwrap().to_rfc3339(), "1970-01-01T00:00:00Z");
    /// ```
    pub fn to_rfc3339(self) -> String {
        match jiff::Timestamp::from_microsecond(self.0) {
            Ok(ts) => ts.to_string(),
            Err(_) => {
                // Past jiff's instants, within the year 9999: the civil time in UTC.
                let days = self.0.div_euclid(86_400_000_000);
                let micros = self.0.rem_euclid(86_400_000_000);
                let date = EPOCH.checked_add(jiff::Span::new().days(days));
                let time =
                    jiff::civil::Time::MIN.checked_add(jiff::SignedDuration::from_micros(micros));
                match (date, time) {
                    (Ok(date), Ok(time)) => format!("{}Z", date.to_datetime(time)),
                    _ => self.to_string(),
                }
            }
        }
    }

    /// Microseconds since the epoch.
    pub fn micros(self) -> i64 {
        self.0
    }

    /// Seconds since the epoch: the nearest `f64`, as detections show a time given as
    /// a number.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }

    /// This instant moved by `span` microseconds, saturating at the representable range.
    pub fn saturating_add(self, span: i64) -> Timestamp {
        Timestamp(self.0.saturating_add(span).clamp(MIN_MICROS, MAX_MICROS))
    }

    /// Microseconds from `earlier` to `self` (negative if `earlier` is later).
    pub fn since(self, earlier: Timestamp) -> i64 {
        self.0 - earlier.0
    }
}

/// As a number of microseconds since the Unix epoch.
impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_i64(self.0)
    }
}

/// From a number of microseconds since the Unix epoch, in range.
impl<'de> serde::Deserialize<'de> for Timestamp {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Timestamp, D::Error> {
        let us = i64::deserialize(d)?;
        Timestamp::from_micros(us)
            .ok_or_else(|| serde::de::Error::custom(format!("{us} µs is outside years 1 to 9999")))
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.as_secs_f64())
    }
}

/// Why a text is not a [`Timestamp`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TimeError {
    /// The text is not an RFC 3339 time.
    #[error("not an RFC 3339 time ({reason})")]
    NotRfc3339 {
        /// What the RFC 3339 parser said.
        reason: String,
    },
    /// The time lies outside the years 0001–9999.
    #[error("outside the years 0001-9999")]
    OutOfRange,
}

/// 1970-01-01.
const EPOCH: jiff::civil::Date = jiff::civil::Date::constant(1970, 1, 1);

/// Nanoseconds since the epoch of an RFC 3339 time past jiff's latest instant, read
/// from its date, time and numeric offset; `None` if it is not such a time.
fn late_nanos(text: &str) -> Option<i128> {
    let pieces = jiff::fmt::temporal::DateTimeParser::new()
        .parse_pieces(text)
        .ok()?;
    let time = pieces.time()?;
    let offset = pieces.to_numeric_offset()?;
    let utc = civil_nanos(pieces.date().to_datetime(time));
    Some(utc - i128::from(offset.seconds()) * 1_000_000_000)
}

/// Nanoseconds since the epoch of civil time `dt` read in UTC.
fn civil_nanos(dt: jiff::civil::DateTime) -> i128 {
    let day = dt.date().duration_since(EPOCH).as_nanos();
    day + dt.time().duration_since(jiff::civil::Time::MIN).as_nanos()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_rounds_to_the_microsecond_halves_towards_the_future() {
        let micros = |s: &str| Timestamp::parse_rfc3339(s).map(Timestamp::micros);
        assert_eq!(micros("1970-01-01T00:00:00.0000005Z"), Ok(1));
        assert_eq!(micros("1970-01-01T00:00:00.0000004Z"), Ok(0));
        assert_eq!(micros("1969-12-31T23:59:59.9999995Z"), Ok(0));
        assert_eq!(micros("1969-12-31T23:59:59.9999994Z"), Ok(-1));
        assert_eq!(
            micros("2024-01-01T02:00:00+02:00"),
            Ok(1_704_067_200_000_000)
        );
    }

    #[test]
    fn rfc3339_errors() {
        assert_eq!(
            Timestamp::parse_rfc3339("0000-12-31T23:59:59Z"),
            Err(TimeError::OutOfRange)
        );
        assert!(Timestamp::parse_rfc3339("0001-01-01T00:00:00Z").is_ok());
        assert!(matches!(
            Timestamp::parse_rfc3339("2024-01-01T00:00:00"),
            Err(TimeError::NotRfc3339 { .. })
        ));
    }

    #[test]
    fn rfc3339_text_round_trips() {
        let last_formatted = Timestamp::parse_rfc3339("9999-12-29T23:59:59.999999Z").unwrap();
        for t in [
            Timestamp::MIN,
            last_formatted,
            Timestamp(0),
            Timestamp(-1),
            Timestamp(1_500_000),
        ] {
            assert_eq!(Timestamp::parse_rfc3339(&t.to_rfc3339()), Ok(t));
        }
        assert_eq!(Timestamp(-1).to_rfc3339(), "1969-12-31T23:59:59.999999Z");
        assert_eq!(Timestamp::MAX.to_rfc3339(), "9999-12-31T23:59:59.999999Z");
    }

    /// The last day and a half of the year 9999, past jiff's instants.
    #[test]
    fn the_end_of_the_year_9999() {
        for text in [
            "9999-12-30T22:00:00.000001Z",
            "9999-12-31T12:00:00Z",
            "9999-12-31T23:59:59.999999Z",
            "9999-12-31T23:00:00-00:59",
        ] {
            let t = Timestamp::parse_rfc3339(text).unwrap();
            assert!(t > Timestamp::parse_rfc3339("9999-12-30T22:00:00Z").unwrap());
            assert_eq!(Timestamp::parse_rfc3339(&t.to_rfc3339()), Ok(t), "{text}");
        }
        assert_eq!(
            Timestamp::parse_rfc3339("9999-12-31T23:59:59.999999Z"),
            Ok(Timestamp::MAX)
        );
        assert_eq!(
            Timestamp::parse_rfc3339("9999-12-31T12:00:00+01:00").map(Timestamp::to_rfc3339),
            Ok("9999-12-31T11:00:00Z".to_owned())
        );
        // Past the year 9999 by an offset: out of range, not unreadable.
        assert_eq!(
            Timestamp::parse_rfc3339("9999-12-31T23:30:00-01:00"),
            Err(TimeError::OutOfRange)
        );
        assert!(matches!(
            Timestamp::parse_rfc3339("9999-12-31T12:00:00"),
            Err(TimeError::NotRfc3339 { .. })
        ));
        let secs = Timestamp::parse_rfc3339("9999-12-31T00:00:00Z")
            .unwrap()
            .as_secs_f64();
        assert_eq!(secs, 253_402_214_400.0);
    }

    proptest::proptest! {
        /// Where jiff formats, the civil path formats the same.
        #[test]
        fn civil_formatting_agrees_with_jiff(micros in MIN_MICROS..253_402_207_200_000_000i64) {
            let t = Timestamp(micros);
            let days = micros.div_euclid(86_400_000_000);
            let date = EPOCH.checked_add(jiff::Span::new().days(days)).unwrap();
            let time = jiff::civil::Time::MIN
                .checked_add(jiff::SignedDuration::from_micros(micros.rem_euclid(86_400_000_000)))
                .unwrap();
            proptest::prop_assert_eq!(format!("{}Z", date.to_datetime(time)), t.to_rfc3339());
        }
    }
}
